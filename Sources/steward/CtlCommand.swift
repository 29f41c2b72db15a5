#if canImport(Glibc)
import Glibc
#endif
import CLI
import Config
import Foundation
import Logging

/// `steward ctl <command>`: the control-socket client.
enum CtlCommand: StewardCommand {
    static let spec = CommandSpec(
        name: "ctl",
        abstract: "Talk to a running daemon over its control socket.",
        discussion: """
        Commands: status, jobs, history <job> [n], run <job> [--dry-run], pause <job>, resume <job>,
        migrations, verify, reload, metrics, help. Changing commands (run, pause, resume, reload) need root
        or steward's own user; members of the socket's group may use the others.
        Exits 0 when the daemon answered ok, 1 when it refused, 69 when no daemon listens.

        Examples: steward ctl status      steward ctl run prune-history --dry-run      steward ctl metrics
        """,
        positionals: "<command> [arguments]",
        options: [
            .init("socket", value: "PATH", help: "The socket (default [control] socket in --config, else /run/steward/control.sock)."),
            .init("config", value: "FILE", help: "Read the socket path from this config file."),
            .init("json", help: "Print the daemon's JSON reply as it is."),
            .init("dry-run", help: "Passed on to run."),
            .init("timeout", value: "SECONDS", help: "How long to wait for the reply (default 600, for long runs)."),
        ])

    static func run(_ context: CommandContext) async throws -> ExitCode {
        guard !context.arguments.positionals.isEmpty else {
            throw UsageError(command: spec.name, message: "name a command: status, jobs, history, run, pause, resume, migrations, verify, reload, metrics, help")
        }
        let line = (context.arguments.positionals + (context.arguments.flag("dry-run") ? ["--dry-run"] : [])).joined(separator: " ")
        let timeout = Double(context.arguments.value("timeout") ?? "600") ?? 600
        let path = context.config.controlSocket
        let reply: String
        do {
            reply = try exchange(line, path: path, timeout: timeout)
        } catch let error as ControlClientError {
            Output.error("\(path): \(error.message)")
            return .unavailable
        }
        let fields = (try? JSONSerialization.jsonObject(with: Data(reply.utf8))) as? [String: Any]
        let ok = fields?["ok"] as? Bool ?? false
        if context.json {
            Output.print(reply)
        } else if ok {
            Output.print(fields?["text"] as? String ?? reply)
        } else {
            Output.error(fields?["error"] as? String ?? reply)
        }
        return ok ? .ok : .failure
    }

    struct ControlClientError: Error { let message: String }

    /// Sends one line, reads one reply line.
    static func exchange(_ line: String, path: String, timeout: Double) throws -> String {
        var address = sockaddr_un()
        let bytes = Array(path.utf8)
        guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else { throw ControlClientError(message: "socket path too long") }
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in for (i, b) in bytes.enumerated() { raw[i] = b } }
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw ControlClientError(message: String(cString: strerror(errno))) }
        defer { close(fd) }
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard connected == 0 else {
            throw ControlClientError(message: "cannot connect (\(String(cString: strerror(errno)))); is steward run up, and may you use its socket?")
        }
        var tv = timeval(tv_sec: Int(timeout), tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
        let request = Array((line + "\n").utf8)
        guard request.withUnsafeBytes({ send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }) == request.count else {
            throw ControlClientError(message: "could not send the request: \(String(cString: strerror(errno)))")
        }
        var reply: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        while !reply.contains(0x0A) {
            let n = recv(fd, &buffer, buffer.count, 0)
            if n == 0 { break }
            if n < 0 { throw ControlClientError(message: "no reply: \(String(cString: strerror(errno)))") }
            reply += buffer[..<n]
        }
        return String(decoding: reply.prefix { $0 != 0x0A }, as: UTF8.self)
    }
}
