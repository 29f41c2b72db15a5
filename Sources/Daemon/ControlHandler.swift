import OutputText
import Config
import StewardJSON
import Control
import FoundationEssentials
import Glibc
import Jobs
import StewardLog
import Migrations
import Postgres
import SupabaseProject

/// Answers control-socket requests: one JSON object per reply, with a `text` field the CLI prints.
struct ControlHandler: Sendable {
    let coordinator: Coordinator
    let session: DatabaseSession
    let makeSession: @Sendable (String) -> DatabaseSession
    let reload: @Sendable () async -> ReloadOutcome
    let logger: Logger
    let host: String
    /// A connection of its own for root and Steward's user, so their requests never queue behind other users'.
    let privilegedSession: DatabaseSession
    /// The last `jobs` reply, given again while nothing it shows has changed.
    let jobsReply = JobsReplyMemo()

    init(coordinator: Coordinator, session: DatabaseSession, makeSession: @escaping @Sendable (String) -> DatabaseSession,
         reload: @escaping @Sendable () async -> ReloadOutcome, logger: Logger, host: String) {
        self.coordinator = coordinator
        self.session = session
        self.makeSession = makeSession
        self.reload = reload
        self.logger = logger
        self.host = host
        self.privilegedSession = makeSession("control-privileged")
    }

    /// The database connection that serves `peer`.
    private func database(for peer: PeerCredentials) -> DatabaseSession { peer.mayChange ? privilegedSession : session }

    /// The reply when it needs no waiting: a request that does not parse, `help`, and `jobs` while the held last runs
    /// are fresh; nil when `handle` must answer. Called on the control socket's thread: never blocks.
    func answerAtOnce(_ line: String, peer: PeerCredentials) -> String? {
        let request: ControlRequest
        do {
            request = try ControlRequest(line: line)
        } catch {
            return failure(error.message)
        }
        let reply: String?
        switch request.command.name {
        case "help": reply = help()
        case "jobs": reply = coordinator.lastRuns.held().map { jobs(last: $0) }
        default: reply = nil
        }
        if reply != nil { logger.debug("control request", [("command", request.command.name), ("uid", String(peer.uid))]) }
        return reply
    }

    func handle(_ line: String, peer: PeerCredentials) async -> String {
        let request: ControlRequest
        do {
            request = try ControlRequest(line: line)
        } catch {
            return failure(error.message)
        }
        if request.command.changes && !peer.mayChange {
            logger.warning("control request refused", [("command", request.command.name), ("uid", String(peer.uid)), ("pid", String(peer.pid))])
            return failure("\(request.command.name) changes the daemon: only root or steward's own user may ask (you are uid \(peer.uid))")
        }
        logger.debug("control request", [("command", request.command.name), ("uid", String(peer.uid))])
        do {
            switch request.command.name {
            case "help": return help()
            case "status": return await status(database(for: peer))
            case "jobs": return await jobs(database(for: peer))
            case "history": return try await history(request, database(for: peer))
            case "run": return try await runNow(request, peer: peer)
            case "pause", "resume": return try await pause(request, peer: peer)
            case "migrations": return try await migrations(database(for: peer))
            case "verify": return try await verify(database(for: peer))
            case "reload": return await reloadNow()
            case "metrics":
                let text = MetricsRenderer.render(coordinator)
                return success([("metrics", .string(text))], text: text)
            default: return failure("unknown command")
            }
        } catch {
            return failure("\(request.command.name) failed: \(error)")
        }
    }

    private func success(_ fields: [(String, JSON)], text: String) -> String {
        JSON.object([("ok", .bool(true))] + fields + [("text", .string(text))]).rendered
    }

    private func failure(_ message: String) -> String {
        JSON.object([("ok", .bool(false)), ("error", .string(message))]).rendered
    }

    private func help() -> String { Self.helpReply }

    /// The `help` reply, the same for every request.
    private static let helpReply: String = {
        let lines = ControlRequest.commands.map { "\($0.usage.padding(toLength: 24, withPad: " ", startingAt: 0))\($0.help)\($0.changes ? " (root or steward's user)" : "")" }
        return JSON.object([("ok", .bool(true)), ("commands", .strings(ControlRequest.commands.map(\.usage))),
                            ("text", .string(lines.joined(separator: "\n")))]).rendered
    }()

    private func status(_ session: DatabaseSession) async -> String {
        let s = coordinator.state.withLock { $0 }
        var text = "instance \(host) pid \(getpid()), up \(Int(Date().timeIntervalSince(coordinator.startedAt))) s\n"
        text += s.isLeader ? "leader: this instance (since \(s.leaderSince.map(ISODate.string) ?? "?"))\n" : "leader: another instance (this one stands by)\n"
        text += "database: \(s.databaseReachable ? "reachable" : "UNREACHABLE")\n"
        text += "schema: \(s.schemaDifferences) difference(s), \(s.pendingMigrations) pending migration(s)\n"
        let (jobsText, jobsJSON) = await jobTable(session)
        return success([("host", .string(host)), ("pid", .number(Double(getpid()))), ("leader", .bool(s.isLeader)),
                        ("database_reachable", .bool(s.databaseReachable)), ("schema_differences", .number(Double(s.schemaDifferences))),
                        ("pending_migrations", .number(Double(s.pendingMigrations))), ("jobs", jobsJSON)],
                       text: text + "\n" + jobsText)
    }

    /// The `jobs` reply: from the held last runs and the scheduler's state, without a query; rendered again only
    /// when something in it changed or a run reports progress.
    private func jobs(_ session: DatabaseSession) async -> String { jobs(last: await lastRuns(session)) }

    private func jobs(last: [String: LastRunCache.Entry]) -> String {
        let s = coordinator.state.withLock { $0 }
        let key = s.settings.jobs.map { configured in
            let name = configured.settings.name
            return JobsReplyMemo.Row(name: name, enabled: configured.settings.enabled, paused: s.scheduler.isPaused(name),
                                     running: s.scheduler.isRunning(name), schedule: configured.settings.schedule.description,
                                     next: s.scheduler.nextSlot(name), last: last[name])
        }
        if s.progress.isEmpty, let reply = jobsReply.reply(for: key) { return reply }
        let (text, json) = jobTable(s, last: last)
        let reply = success([("jobs", json)], text: text)
        if s.progress.isEmpty { jobsReply.store(reply, for: key) }
        return reply
    }

    private func jobTable(_ session: DatabaseSession) async -> (String, JSON) {
        let last = await lastRuns(session)
        return jobTable(coordinator.state.withLock { $0 }, last: last)
    }

    private func jobTable(_ s: Coordinator.State, last: [String: LastRunCache.Entry]) -> (String, JSON) {
        let now = ContinuousClock.now
        var text = "JOB              ENABLED PAUSED  RUNNING SCHEDULE                 NEXT                  LAST\n"
        var items: [JSON] = []
        for configured in s.settings.jobs {
            let name = configured.settings.name
            let next = s.scheduler.nextSlot(name)
            let lastRun = last[name]
            let lastText = lastRun.map { "\($0.status) \($0.startedAt.map(ISODate.string) ?? "")" } ?? "-"
            let progress = s.progress[name].map { JobProgressEstimate($0.snapshot, now: now) }
            text += name.padding(toLength: 17, withPad: " ", startingAt: 0)
                + (configured.settings.enabled ? "yes" : "no").padding(toLength: 8, withPad: " ", startingAt: 0)
                + (s.scheduler.isPaused(name) ? "yes" : "no").padding(toLength: 8, withPad: " ", startingAt: 0)
                + (s.scheduler.isRunning(name) ? "yes" : "no").padding(toLength: 8, withPad: " ", startingAt: 0)
                + configured.settings.schedule.description.padding(toLength: 25, withPad: " ", startingAt: 0)
                + (next.map(ISODate.string) ?? "-").padding(toLength: 22, withPad: " ", startingAt: 0) + lastText + "\n"
            if let progress { text += "  progress: \(progress.line)\n" }
            items.append(.object([("name", .string(name)), ("enabled", .bool(configured.settings.enabled)),
                                  ("paused", .bool(s.scheduler.isPaused(name))), ("running", .bool(s.scheduler.isRunning(name))),
                                  ("schedule", .string(configured.settings.schedule.description)), ("next", .optional(next.map(ISODate.string))),
                                  ("last_status", .optional(lastRun?.status)), ("last_started", .optional(lastRun?.startedAt.map(ISODate.string))),
                                  ("last_success", .optional(lastRun?.lastSuccessAt.map(ISODate.string))),
                                  ("progress", progress?.json ?? .null)]))
        }
        return (text, .array(items))
    }

    /// Each job's last run and last success, from the daemon's held copy (read again when stale, see `LastRunCache`).
    func lastRuns(_ session: DatabaseSession) async -> [String: LastRunCache.Entry] {
        let history = RunHistory(session: session, host: host, pid: Int(getpid()))
        return await coordinator.lastRuns.current {
            var entries: [String: LastRunCache.Entry] = [:]
            for (job, runs) in try await history.lastRuns() {
                guard let status = runs.last?.status.rawValue ?? runs.lastSuccess?.status.rawValue else { continue }
                entries[job] = LastRunCache.Entry(status: status, startedAt: runs.last?.startedAt, lastSuccessAt: runs.lastSuccess?.finishedAt)
            }
            return entries
        }
    }

    private func history(_ request: ControlRequest, _ session: DatabaseSession) async throws -> String {
        let job = request.arguments[0]
        guard coordinator.job(named: job) != nil else { throw ControlError("no job \(job)") }
        let limit = request.arguments.count > 1 ? Int(request.arguments[1]) ?? -1 : 10
        guard (1...1000).contains(limit) else { throw ControlError("n must be a number from 1 to 1000") }
        let rows = try await RunHistory(session: session, host: host, pid: Int(getpid())).recent(job: job, limit: limit)
        var text = "ID     STATUS     TRIGGER   SLOT                  STARTED               SECONDS  SUMMARY / ERROR\n"
        for row in rows {
            var seconds = "-"
            if let start = row.startedAt, let end = row.finishedAt { seconds = String(fixed: end.timeIntervalSince(start), digits: 1) }
            var line = String(row.id).padding(toLength: 7, withPad: " ", startingAt: 0)
            line += row.status.rawValue.padding(toLength: 11, withPad: " ", startingAt: 0)
            line += row.trigger.padding(toLength: 10, withPad: " ", startingAt: 0)
            line += (row.scheduledFor.map(ISODate.string) ?? "-").padding(toLength: 22, withPad: " ", startingAt: 0)
            line += (row.startedAt.map(ISODate.string) ?? "-").padding(toLength: 22, withPad: " ", startingAt: 0)
            line += seconds.padding(toLength: 9, withPad: " ", startingAt: 0)
            text += line + (row.error ?? row.summary ?? "") + "\n"
        }
        let json = JSON.array(rows.map { row in
            .object([("id", .number(Double(row.id))), ("status", .string(row.status.rawValue)), ("trigger", .string(row.trigger)),
                     ("attempt", .number(Double(row.attempt))), ("scheduled_for", .optional(row.scheduledFor.map(ISODate.string))),
                     ("started_at", .optional(row.startedAt.map(ISODate.string))), ("finished_at", .optional(row.finishedAt.map(ISODate.string))),
                     ("dry_run", .bool(row.dryRun)), ("summary", .optional(row.summary)), ("error", .optional(row.error)),
                     ("host", .string(row.host)), ("pid", .number(Double(row.pid)))])
        })
        return success([("job", .string(job)), ("runs", json)], text: text)
    }

    private func runNow(_ request: ControlRequest, peer: PeerCredentials) async throws -> String {
        let job = request.arguments[0]
        guard let configured = coordinator.job(named: job) else { throw ControlError("no job \(job)") }
        let dryRun = request.flags.contains("--dry-run")
        logger.notice("run requested on the control socket", [("job", job), ("dry_run", String(dryRun)), ("uid", String(peer.uid))])
        // The scheduler runs it as it runs a slot: through its state (one run of a job at a time here) and its shutdown grace.
        let outcome: JobRunner.Outcome
        if let handled = await coordinator.manualRuns.submit(job: job, dryRun: dryRun) {
            outcome = handled
        } else if coordinator.manualRuns.phase == .closed {
            outcome = ManualRunner.refusal(reason: "the daemon is stopping: no new runs start")
        } else {
            // The scheduler has not started yet (the database is being waited for): the run goes on here, still
            // through the scheduler's state.
            outcome = await ManualRunner(coordinator: coordinator, makeSession: makeSession, host: host, logger: logger)
                .run(configured, dryRun: dryRun)
        }
        let text = "\(job): \(outcome.status.rawValue) in \(String(fixed: outcome.seconds, digits: 2)) s"
            + (outcome.summary.map { " — \($0.text)" } ?? "") + (outcome.reason.map { " — \($0)" } ?? "")
        let fields: [(String, JSON)] = [("job", .string(job)), ("status", .string(outcome.status.rawValue)), ("dry_run", .bool(dryRun)),
                                        ("run_id", outcome.runID.map { .number(Double($0)) } ?? .null), ("seconds", .number(outcome.seconds)),
                                        ("summary", outcome.summary?.json ?? .null), ("reason", .optional(outcome.reason))]
        return outcome.status == .succeeded ? success(fields, text: text)
            : JSON.object([("ok", .bool(false))] + fields + [("error", .string(text)), ("text", .string(text))]).rendered
    }

    private func pause(_ request: ControlRequest, peer: PeerCredentials) async throws -> String {
        let job = request.arguments[0]
        guard coordinator.job(named: job) != nil else { throw ControlError("no job \(job)") }
        let paused = request.command.name == "pause"
        try await RunHistory(session: database(for: peer), host: host, pid: Int(getpid())).setPaused(job: job, paused: paused, by: "uid \(peer.uid) via \(host)")
        coordinator.withScheduler { $0.setPaused(job, paused) }
        logger.notice(paused ? "job paused" : "job resumed", [("job", job), ("uid", String(peer.uid))])
        return success([("job", .string(job)), ("paused", .bool(paused))], text: "\(job) \(paused ? "paused" : "resumed") (cluster-wide)")
    }

    private func migrations(_ session: DatabaseSession) async throws -> String {
        let directory = coordinator.settings.migrationsDirectory
        let include = coordinator.settings.config[MigrationsConfig.include]
        let status = try await session.run { c in try Migrator(connection: c, source: try MigrationSource(directory: directory, include: include), logger: .silent).status() }
        coordinator.state.withLock { $0.pendingMigrations = status.pending.count }
        var text = ""
        for item in status.items {
            text += item.state.rawValue.padding(toLength: 10, withPad: " ", startingAt: 0) + "\(item.version)_\(item.name).sql"
                + (item.notes.isEmpty ? "" : "  (\(item.notes.joined(separator: "; ")))") + "\n"
        }
        text += status.problems.map { "problem: \($0)\n" }.joined()
        return success([("migrations", .array(status.items.map { .object([("version", .string($0.version)), ("name", .string($0.name)),
                                                                           ("state", .string($0.state.rawValue))]) })),
                        ("pending", .number(Double(status.pending.count))), ("problems", .strings(status.problems))], text: text)
    }

    private func verify(_ session: DatabaseSession) async throws -> String {
        let directory = coordinator.settings.migrationsDirectory
        let include = coordinator.settings.config[MigrationsConfig.include]
        let report = try await session.run { c in try Verifier(connection: c, source: try MigrationSource(directory: directory, include: include), advisor: SupabaseAdvisor()).verify() }
        coordinator.state.withLock { $0.schemaDifferences = report.differences.count; $0.schemaAdvisories = report.advisories.count }
        let text = report.differences.isEmpty ? "ok: the database matches the \(report.checkedFiles) applied migration(s)"
            : report.differences.map { "difference: \($0)" }.joined(separator: "\n")
        return success([("differences", .strings(report.differences)), ("advisories", .strings(report.advisories))],
                       text: text + report.advisories.map { "\nadvice: \($0)" }.joined())
    }

    private func reloadNow() async -> String {
        switch await reload() {
        case .applied(let needsRestart):
            return success([("reloaded", .bool(true)), ("restart_needed", .strings(needsRestart))],
                           text: "configuration reloaded" + (needsRestart.isEmpty ? ""
                               : "\nnot applied until a restart (read only at start): " + needsRestart.joined(separator: ", ")))
        case .refused(let errors):
            return JSON.object([("ok", .bool(false)), ("reloaded", .bool(false)), ("errors", .strings(errors)),
                                ("error", .string("configuration refused; the old one stays: " + errors.joined(separator: "; ")))]).rendered
        }
    }
}
