import CLI
import Config
import Fleet
import FoundationEssentials
import Jobs

/// `steward(1)` and `steward.ini(5)` in roff, written from the tables `--help` and `config check` use.
enum ManualPages {
    /// The pages by name, for the hidden `steward man <page>` command.
    static let names = ["steward", "steward.ini"]

    static func page(_ name: String) -> String? {
        switch name {
        case "steward": return steward
        case "steward.ini": return stewardINI
        default: return nil
        }
    }

    /// What each environment variable in `CommandContext.environmentKeys` does.
    static let environment: [String: String] = [
        "STEWARD_DATABASE_URL": "The database URL when --database-url is not given; beats [database] url.",
        "STEWARD_MIGRATIONS_DIR": "The migrations folder when --migrations is not given; beats [migrations] dir.",
        "STEWARD_LOG_LEVEL": "The log level when --log-level is not given; beats [log] level.",
        "STEWARD_CONTROL_SOCKET": "The control socket path when --socket is not given; beats [control] socket.",
        "STEWARD_PROJECT": "The project label on every metric (project=\"NAME\"); beats [metrics] project. steward@.service sets it to the instance name.",
        "NOTIFY_SOCKET": "Set by systemd for Type=notify services: steward run reports READY=1, STATUS=, STOPPING=1 there.",
        "WATCHDOG_USEC": "Set by systemd with WatchdogSec=: steward run sends WATCHDOG=1 every half of it.",
        "WATCHDOG_PID": "Set by systemd with the watchdog: the process the watchdog is meant for.",
        "CREDENTIALS_DIRECTORY": "Set by systemd with LoadCredential=: where credential:NAME secret files are read.",
    ]

    /// The files the package installs or Steward reads and writes.
    static let files: [(String, String)] = [
        ("/etc/steward/steward.ini", "The configuration (see steward.ini(5)); mode 640, group steward."),
        ("/etc/steward/database-password", "The database password, passed to the service as the credential database-password."),
        ("/run/steward/control.sock", "The control socket (mode 0660): root and the steward user may change, the steward group may read."),
        ("/usr/share/steward/migrations", "The quickstart's migrations, NNNN_name.sql."),
        ("/usr/share/steward/optional", "Opt-in migration folders (username-enforcement, storage-hardening, avatar-integrity)."),
        ("/usr/share/steward/reserved-usernames.txt", "The built-in reserved usernames, one a line."),
        ("/lib/systemd/system/steward.service", "The systemd unit (Type=notify, user steward)."),
        ("/lib/systemd/system/steward@.service", """
            The template unit, one instance per project: steward@NAME reads /etc/steward/NAME.ini and the password \
            /etc/steward/NAME.password, has its own control socket /run/steward/NAME/control.sock and state directory \
            /var/lib/steward/NAME, and labels every metric project="NAME".
            """),
        ("/usr/lib/sysusers.d/steward.conf", "Creates the steward system user and group."),
    ]

    static var steward: String {
        var page = header(name: "STEWARD", section: 1, title: "User Commands")
        page += ".SH NAME\nsteward \\- keeps a Supabase user\\-management project's database in shape\n"
        page += ".SH SYNOPSIS\n.B steward\n.I command\n.RI [ options ]\n.br\n.B steward help\n.RI [ command ]\n.br\n.B steward version\n"
        page += ".SH DESCRIPTION\n"
        page += Roff.paragraphs("""
        Steward applies and verifies the database migrations of a Supabase user-management project, runs its upkeep \
        jobs on a schedule as a systemd service, and answers operators on a control socket.

        The database URL comes from --database-url, else STEWARD_DATABASE_URL, else [database] url in --config. \
        Use the direct connection (port 5432) or the session pooler; the transaction pooler (port 6543) is refused.
        """) + "\n"
        page += ".SH COMMANDS\n"
        for command in Steward.commands {
            let spec = command.spec
            page += ".SS \"steward \(Roff.escaped(spec.name))\(spec.positionals.map { " " + Roff.escaped($0) } ?? "") [options]\"\n"
            page += Roff.paragraphs(spec.abstract) + "\n"
            if !spec.discussion.isEmpty { page += ".PP\n" + Roff.paragraphs(spec.discussion) + "\n" }
            for option in spec.options {
                page += ".TP\n" + optionTag(option) + "\n" + Roff.paragraphs(option.help) + "\n"
            }
        }
        page += ".SS \"steward help [command]\"\nShow the overview, or one command's options.\n"
        page += ".SS \"steward version\"\nPrint the version.\n"
        page += ".SH JOBS\n"
        for job in JobCatalog.steward.all {
            page += ".TP\n.B \(Roff.escaped(job.name))\n" + Roff.paragraphs(job.abstract) + " Default schedule: \\fB\(Roff.escaped(job.defaultSchedule))\\fR.\n"
        }
        page += ".SH EXIT STATUS\n"
        for code in ExitCode.all {
            page += ".TP\n.B \(code.rawValue)\n" + Roff.paragraphs(code.meaning) + "\n"
        }
        page += ".SH ENVIRONMENT\n"
        for key in CommandContext.environmentKeys {
            page += ".TP\n.B \(Roff.escaped(key))\n" + Roff.paragraphs(environment[key] ?? "Read at start.") + "\n"
        }
        page += ".SH FILES\n"
        for (path, what) in files {
            page += ".TP\n.I \(Roff.escaped(path))\n" + Roff.paragraphs(what) + "\n"
        }
        page += ".SH SEE ALSO\n.BR steward.ini (5),\n.BR systemctl (1),\n.BR systemd.exec (5),\n.BR journalctl (1)\n"
        return page
    }

    /// What a key's entry adds to the words it is declared with (those are also `config check`'s refusal).
    static let keyNotes: [String: [String: String]] = [
        "metrics": ["textfile": """
            The systemd unit (ProtectSystem=strict) allows writing in /var/lib/prometheus/node-exporter, node_exporter's \
            usual textfile folder (ReadWritePaths=); the steward user needs write access to it too. A textfile in another \
            folder needs that folder in a drop-in: systemctl edit steward, then [Service] ReadWritePaths=/that/folder.
            """],
    ]

    static var stewardINI: String {
        var page = header(name: "STEWARD.INI", section: 5, title: "File Formats")
        page += ".SH NAME\nsteward.ini \\- the configuration of steward\n"
        page += ".SH SYNOPSIS\n.I /etc/steward/steward.ini\n"
        page += ".SH DESCRIPTION\n"
        page += Roff.paragraphs("""
        An INI file: [section] headers and key = value lines, each key once. Comments start with ; or # at the start \
        of a line; after a value, a ; preceded by a space or tab starts a comment too (so a value that must hold " ;" \
        cannot be written). Command-line flags beat environment variables, which beat this file. A mistake stops Steward before \
        it does anything: the error names file, line and key (exit 78). Check a file with steward config check --config FILE.

        Secrets never go in this file: keys ending in _file name a file readable only by Steward's user (mode 600), \
        or credential:NAME for a systemd credential (LoadCredential=).
        """) + "\n"
        for section in ConfigSchema.steward.sections {
            page += ".SH \"[\(section.name)]\"\n"
            if !section.about.isEmpty { page += Roff.paragraphs(section.about) + "\n" }
            for key in section.keys.sorted(by: { $0.name < $1.name }) {
                page += keyEntry(key.name, takes: key.takes, default: key.defaultText, note: keyNotes[section.name]?[key.name]
                                 ?? (key.appliesOnReload ? nil : "Read at start: a reload that changes it says so and keeps the running value until a restart."))
            }
        }
        page += ".SH \"[target.NAME]\"\n"
        page += Roff.paragraphs("""
        One section per project of a fleet, for steward fleet status, migrate, verify and job run. NAME is letters, \
        digits, . _ or -. Stages run in the order [fleet] stages lists them; --migrations and --include on the command \
        line apply to every target. A config without targets is a single project, as before. steward fleet job run \
        orphan-avatars deletes through each target's own storage_url and service_key_file, never through [storage], and \
        refuses a target without them (exit 78) before any target is touched.
        """) + "\n"
        for key in FleetConfig.targetKeys.sorted(by: { $0.name < $1.name }) {
            page += keyEntry(key.name, takes: key.takes, default: key.defaultText)
        }
        page += ".SH \"[job.NAME]\"\n"
        page += Roff.paragraphs("One section per job; every job takes these keys, and the keys of its own below.") + "\n"
        for key in JobSettings.common.sorted(by: { $0.name < $1.name }) {
            page += keyEntry(key.name, takes: key.takes, default: key.defaultText)
        }
        for job in JobCatalog.steward.all {
            page += ".SS \"[job.\(Roff.escaped(job.name))]\"\n"
            page += Roff.paragraphs(job.abstract) + " Default schedule: \\fB\(Roff.escaped(job.defaultSchedule))\\fR.\n"
            if job.options.isEmpty { page += ".PP\nNo keys beyond the common ones.\n" }
            for option in job.options.map(\.erased) {
                page += keyEntry(option.name, takes: option.takes, default: option.defaultText.isEmpty ? "unset" : option.defaultText)
            }
        }
        page += ".SH FILES\n.TP\n.I /etc/steward/steward.ini\nThe configuration the service reads.\n"
        page += ".SH SEE ALSO\n.BR steward (1)\n"
        return page
    }

    static func header(name: String, section: Int, title: String) -> String {
        ".\\\" Generated by steward man; do not edit.\n.TH \(name) \(section) \"\" \"steward \(Steward.version)\" \"\(title)\"\n"
    }

    static func optionTag(_ option: CommandSpec.Option) -> String {
        "\\fB\\-\\-\(Roff.escaped(option.name))\\fR" + (option.valueName.map { " \\fI\(Roff.escaped($0))\\fR" } ?? "")
    }

    static func keyEntry(_ key: String, takes: String, default fallback: String, note: String? = nil) -> String {
        ".TP\n.B \(Roff.escaped(key))\n" + Roff.paragraphs(takes + ".")
            + "\n.br\nDefault: " + Roff.escaped(fallback) + ".\n" + (note.map { ".IP\n" + Roff.paragraphs($0) + "\n" } ?? "")
    }
}

extension ExitCode {
    /// Every exit code, in numeric order.
    static var all: [ExitCode] { (0...255).compactMap { ExitCode(rawValue: $0) } }

    /// What the code tells a script.
    var meaning: String {
        switch self {
        case .ok: "Success (whatever a job found, unless --fail-on-findings)."
        case .failure: "The command failed: a statement, a lock, a file, or the daemon refused; fleet migrate, verify and job run: a target failed (named in the table)."
        case .drift: "Drift or differences found (status, verify, adopt), new findings with --fail-on-findings, or an Apple secret close to expiry; fleet status: some target has pending or blocked files or drift; fleet verify: some target drifts."
        case .usage: "The command line was wrong."
        case .unavailable: "The database, or the daemon's control socket, could not be reached; fleet commands: some target could not be reached or refused the password (and none failed otherwise)."
        case .temporaryFailure: "Another run of the job holds the lock, or the daemon did not answer in time; try again later."
        case .config: "The configuration is wrong: the message names file:line and key."
        case .interrupted: "fleet migrate, verify and job run: stopped by Ctrl-C (SIGINT) or SIGTERM before every target was reached; the targets that ran finished and are in the summary, the rest are not-started. A second signal cancels the running ones at once (their open transactions roll back)."
        }
    }
}
