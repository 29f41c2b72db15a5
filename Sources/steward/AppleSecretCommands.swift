#if canImport(Glibc)
import OutputText
import StewardJSON
import Glibc
#endif
import Apple
import AppleSecret
import CLI
import Config
import FileSystem
import FoundationEssentials
import StewardLog
import Migrations
import Postgres

/// `steward apple-secret status`: where the secret comes from, when it expires, whether its claims match.
enum AppleSecretStatusCommand: StewardCommand {
    static let spec = CommandSpec(
        name: "apple-secret status",
        abstract: "Show Sign in with Apple's client secret: source, iat/exp, days left, claims.",
        discussion: """
        The secret is read from [apple] secret_file, or its hash from the Management API (project_ref and
        access_token_file), compared with the secrets Steward generated or was given (steward.apple_secrets).
        A native-only app (native_bundle_ids and no secret) needs none. Exits 0 when at least the largest
        remind_days are left, 2 when less (or expired, or unknown), 78 when [apple] is incomplete.
        """,
        options: CommandSpec.Option.databaseOptions)

    static func run(_ context: CommandContext) async throws -> ExitCode {
        let apple = AppleSettings(context.config)
        let session = try await appleSession(context)
        let status = try await AppleSecretStatus.read(apple, database: session)
        await session.reset()
        var lines: [String] = []
        var fields: [(String, JSON)] = [("source", .string(status.source))]
        var code = ExitCode.ok
        switch status.state {
        case .notNeeded:
            lines.append("not needed (native sign-in only: \(apple.nativeBundleIDs.joined(separator: ", ")))")
            fields.append(("state", .string("not-needed")))
        case .unconfigured(let reason):
            throw ConfigError(file: context.config.sourceFile ?? "(no config file)", key: "[apple]", message: reason)
        case .unknown(let hash):
            lines.append("the project's secret (hash \(hash.prefix(12))…) is not one Steward generated or was given: someone changed it by hand, so its expiry is unknown")
            lines.append("give Steward the secret ([apple] secret_file) or rotate it: steward apple-secret generate --push")
            fields += [("state", .string("unknown")), ("hash", .string(hash))]
            code = .drift
        case .known(let secret, let hash):
            let days = status.daysLeft ?? 0
            lines.append("source: \(status.source); the secret Steward knows (hash \(hash.prefix(12))…)")
            lines.append("issued \(ISODate.string(secret.issuedAt)), expires \(ISODate.string(secret.expiresAt)): " + (days > 0 ? "\(Int(days.rounded(.down))) day(s) left" : "EXPIRED"))
            if !secret.teamID.isEmpty { lines.append("claims: iss \(secret.teamID), sub \(secret.servicesID), kid \(secret.keyID)") }
            lines += status.mismatches.map { "MISMATCH: \($0)" }
            fields += [("state", .string(days > 0 ? "valid" : "expired")), ("iat", .string(ISODate.string(secret.issuedAt))),
                       ("exp", .string(ISODate.string(secret.expiresAt))), ("days_left", .number(days.rounded(.down))), ("kid", .string(secret.keyID)),
                       ("iss", .string(secret.teamID)), ("sub", .string(secret.servicesID)), ("mismatches", .strings(status.mismatches))]
            if days < Double(apple.remindDays.max() ?? 30) || !status.mismatches.isEmpty { code = .drift }
        }
        Output.print(context.json ? JSON.object(fields).rendered : lines.joined(separator: "\n"))
        return code
    }
}

/// `steward apple-secret generate`: a new ES256 client secret from the .p8 key.
enum AppleSecretGenerateCommand: StewardCommand {
    static let spec = CommandSpec(
        name: "apple-secret generate",
        abstract: "Generate a new client secret (ES256 JWT) from the .p8 key; write it or push it.",
        discussion: """
        Uses [apple] team_id, key_id, services_id and private_key_file. --out writes the secret to a file (mode 600,
        replaced whole through a temporary file; never through a symbolic link, over another user's file, or into a
        folder others may write without the sticky bit);
        --push sends it to the project through the Management API (PATCH config/auth, external_apple_secret) and
        checks the new hash with a GET. Either way the secret is recorded by its hash, never itself. Without --out or
        --push nothing is written: the secret is never printed to a terminal by accident.
        """,
        options: CommandSpec.Option.databaseOptions + [
            .init("days", value: "N", help: "Lifetime in days (default 180, at most 182)."),
            .init("out", value: "FILE", help: "Write the secret to FILE (mode 600)."),
            .init("push", help: "Send it to the project through the Management API and verify."),
        ])

    static func run(_ context: CommandContext) async throws -> ExitCode {
        let apple = AppleSettings(context.config)
        let days = ConfigNumber.integer(context.arguments.value("days") ?? "180", in: 1...182) ?? -1
        guard (1...182).contains(days) else { throw UsageError(command: spec.name, message: "--days takes 1 to 182") }
        let out = context.arguments.value("out")
        let push = context.arguments.flag("push")
        guard out != nil || push else { throw UsageError(command: spec.name, message: "say where the secret goes: --out FILE, --push, or both") }
        let secret: AppleClientSecret
        do { secret = try AppleSecretRotation.generate(apple, lifetimeDays: days) }
        catch let error as ConfigError { throw error }
        catch { throw ConfigError(file: context.config.sourceFile ?? "(no config file)", key: "[apple]", message: "\(error)") }
        let session = try await appleSession(context)
        let hash = secret.managementHash(projectRef: apple.projectRef ?? "")
        if let out {
            do { try AtomicFile.write(secret.token, to: out, mode: 0o600) }
            catch { throw ConfigError(file: out, message: "cannot write the secret: " + (error.path == out ? error.message : error.description)) }
            try await AppleSecretStatus.record(secret, hash: hash, delivered: "generated", database: session)
            Output.print("wrote a secret to \(out) (mode 600), expires \(ISODate.string(secret.expiresAt))")
        }
        if push {
            let rotated = try await AppleSecretRotation.push(secret, apple: apple, database: session, purpose: "--push")
            Output.print("pushed the secret to project \(apple.projectRef ?? "?") and verified its hash (\(rotated.prefix(12))…); expires \(ISODate.string(secret.expiresAt))")
        }
        await session.reset()
        return .ok
    }
}

/// A database session with Steward's schema ready (apple_secrets, alerts).
func appleSession(_ context: CommandContext) async throws -> DatabaseSession {
    let session = DatabaseSession(try context.connectionTarget(), label: "apple", logger: context.logger.named("postgres"))
    let logger = context.logger
    try await session.run { c in try HistoryStore(connection: c).prepareLocked(logger: logger.named("migrations")) }
    return session
}
