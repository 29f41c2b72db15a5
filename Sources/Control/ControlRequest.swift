/// One request line of the control protocol: a command and its arguments, checked before anything runs.
public struct ControlRequest: Sendable, Equatable {
    /// What a command takes and whether it changes anything.
    public struct Command: Sendable {
        public let name: String
        public let usage: String
        public let help: String
        /// Commands that change state need root or Steward's user.
        public let changes: Bool
        let arguments: ClosedRange<Int>
        let flags: Set<String>
    }

    /// The protocol's commands.
    public static let commands: [Command] = [
        Command(name: "status", usage: "status", help: "leader, instance, jobs at a glance", changes: false, arguments: 0...0, flags: []),
        Command(name: "jobs", usage: "jobs", help: "every job: schedule, state, last and next run", changes: false, arguments: 0...0, flags: []),
        Command(name: "history", usage: "history <job> [n]", help: "the last n runs of a job (default 10)", changes: false, arguments: 1...2, flags: []),
        Command(name: "run", usage: "run <job> [--dry-run]", help: "run a job now and wait for it", changes: true, arguments: 1...1, flags: ["--dry-run"]),
        Command(name: "pause", usage: "pause <job>", help: "record the job's slots as skipped until resumed (cluster-wide)", changes: true, arguments: 1...1, flags: []),
        Command(name: "resume", usage: "resume <job>", help: "schedule a paused job again", changes: true, arguments: 1...1, flags: []),
        Command(name: "migrations", usage: "migrations", help: "applied, pending, changed and missing migrations", changes: false, arguments: 0...0, flags: []),
        Command(name: "verify", usage: "verify", help: "compare the live database with the applied migrations", changes: false, arguments: 0...0, flags: []),
        Command(name: "reload", usage: "reload", help: "re-read the config; a bad one is refused and the old one kept", changes: true, arguments: 0...0, flags: []),
        Command(name: "metrics", usage: "metrics", help: "Prometheus text", changes: false, arguments: 0...0, flags: []),
        Command(name: "help", usage: "help", help: "this list", changes: false, arguments: 0...0, flags: []),
    ]

    public let command: Command
    public let arguments: [String]
    public let flags: Set<String>

    public static func == (lhs: ControlRequest, rhs: ControlRequest) -> Bool {
        lhs.command.name == rhs.command.name && lhs.arguments == rhs.arguments && lhs.flags == rhs.flags
    }

    /// Parses one line; throws a message fit to send back (quoting at most 60 bytes of the request).
    public init(line: String) throws(ControlError) {
        let words = line.split(whereSeparator: { $0 == " " || $0 == "\t" }).map(String.init)
        guard let name = words.first else { throw ControlError("empty request; try help") }
        guard let command = Self.commands.first(where: { $0.name == name }) else {
            throw ControlError("unknown command \"\(name.prefix(60))\"; try help")
        }
        let flags = Set(words.dropFirst().filter { $0.hasPrefix("--") })
        let arguments = words.dropFirst().filter { !$0.hasPrefix("--") }
        if let bad = flags.subtracting(command.flags).first {
            throw ControlError("\(name): unknown option \(bad.prefix(40)) (usage: \(command.usage))")
        }
        guard command.arguments.contains(arguments.count) else {
            throw ControlError("\(name): wrong number of arguments (usage: \(command.usage))")
        }
        self.command = command
        self.arguments = Array(arguments)
        self.flags = flags
    }
}

/// A request the daemon refuses, with the reason sent back to the client.
public struct ControlError: Error, Sendable, CustomStringConvertible {
    public let message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}
