import OutputText
internal import CPostgres
import StewardLog

/// A libpq connection string (a `postgresql://` URL or `key=value` conninfo), parsed by libpq itself.
public struct ConnectionString: Sendable, CustomStringConvertible {
    /// The text as given; holds the password if the user put one in it, so never print it.
    let raw: String
    /// The parameters libpq read from it (`host`, `port`, `user`, `dbname`, `sslmode`, …).
    public let parameters: [String: String]

    /// Parses `text` with libpq's own parser; throws `invalidArgument` naming the problem (never the password).
    ///
    /// Every password the text may hold is registered with `SecretRedactor` first; the common malformed forms are
    /// refused by Steward's own check (quoting nothing), and whatever libpq still says is redacted.
    public init(_ text: String) throws {
        for candidate in ConnectionStringSyntax.passwordCandidates(text) { SecretRedactor.register(candidate) }
        if let problem = ConnectionStringSyntax.problem(text) {
            throw PostgresError(kind: .invalidArgument, message: "invalid database URL: \(problem)")
        }
        // libpq's answer to an unknown key quotes it, and a malformed URL's first "key" holds its password.
        if !ConnectionStringSyntax.isURL(text), let words = try? ConnectionStringSyntax.conninfoWords(text),
           !Self.keywords.isEmpty, let index = words.firstIndex(where: { !Self.keywords.contains($0.0) }) {
            throw PostgresError(kind: .invalidArgument, message: "invalid database URL: word \(index + 1) of the database connection string "
                                + "is not a connection keyword libpq knows (a URL starts with postgresql://)")
        }
        var errorMessage: UnsafeMutablePointer<CChar>?
        guard let options = PQconninfoParse(text, &errorMessage) else {
            let reason = errorMessage.map { String(cString: $0) } ?? "out of memory"
            if let errorMessage { PQfreemem(errorMessage) }
            throw PostgresError(kind: .invalidArgument,
                                message: "invalid database URL: \(SecretRedactor.redact(reason.trimmingTrailingNewlines()))")
        }
        defer { PQconninfoFree(options) }
        var parameters: [String: String] = [:]
        var option = options
        while let keyword = option.pointee.keyword {
            if let value = option.pointee.val { parameters[String(cString: keyword)] = String(cString: value) }
            option += 1
        }
        if let password = parameters["password"] { SecretRedactor.register(password) }
        if let problem = Self.valueProblem(parameters) {
            throw PostgresError(kind: .invalidArgument, message: "invalid database URL: \(SecretRedactor.redact(problem))")
        }
        self.raw = text
        self.parameters = parameters
    }

    /// The values libpq reads only when it connects, checked now so a typo is a config error naming its line rather
    /// than a failure at the first connection (a daemon's, hours later): ports, sslmode, connect_timeout,
    /// target_session_attrs.
    static func valueProblem(_ parameters: [String: String]) -> String? {
        if let ports = parameters["port"] {
            // One port for every host, or one per host; an empty one means the default.
            for port in ports.split(separator: ",", omittingEmptySubsequences: false) where !port.isEmpty {
                guard port.count <= 5, port.allSatisfy({ $0.isASCII && $0.isNumber }), let n = Int(port), (1...65535).contains(n) else {
                    return "a port is a number from 1 to 65535"
                }
            }
        }
        let choices: [(String, [String])] = [
            ("sslmode", ["disable", "allow", "prefer", "require", "verify-ca", "verify-full"]),
            ("target_session_attrs", ["any", "read-write", "read-only", "primary", "standby", "prefer-standby"]),
        ]
        for (keyword, allowed) in choices {
            if let value = parameters[keyword], !allowed.contains(value) {
                return "\(keyword) \"\(LogText.escaped(value))\" is not one of \(allowed.joined(separator: ", "))"
            }
        }
        if let timeout = parameters["connect_timeout"], Int(timeout.trimmingWhitespace()) == nil {
            return "connect_timeout is a whole number of seconds"
        }
        return nil
    }

    /// The connection keywords this libpq knows (`PQconndefaults`), and `requiressl`, which it still accepts (read
    /// as `sslmode`) without listing it.
    static let keywords: Set<String> = {
        guard let defaults = PQconndefaults() else { return [] }
        defer { PQconninfoFree(defaults) }
        var names: Set<String> = ["requiressl"]
        var option = defaults
        while let keyword = option.pointee.keyword {
            names.insert(String(cString: keyword))
            option += 1
        }
        return names
    }()

    /// A copy with `password` set (from a password file or credential); it stays out of `description`.
    public func with(password: String) throws -> ConnectionString {
        SecretRedactor.register(password)
        var text = raw
        let escaped = password.replacing("\\", with: "\\\\").replacing("'", with: "\\'")
        if text.hasPrefix("postgres://") || text.hasPrefix("postgresql://") {
            // A URL cannot be mixed with key=value words, so carry the password as a percent-encoded query parameter.
            let encoded = password.utf8.map { byte -> String in
                let c = Character(UnicodeScalar(byte))
                if c.isASCII && (c.isLetter || c.isNumber || "-._~".contains(c)) { return String(c) }
                let hex = String(byte, radix: 16, uppercase: true)
                return "%" + (hex.count == 1 ? "0" + hex : hex)
            }.joined()
            text += (text.utf8.contains(UInt8(ascii: "?")) ? "&" : "?") + "password=" + encoded
        } else {
            text += " password='\(escaped)'"
        }
        return try ConnectionString(text)
    }

    /// The same server, user and options with another database (a shadow database beside the project's); a
    /// conninfo string of the parameters libpq read, so a URL's query options and a password file's password carry over.
    public func with(database: String) throws -> ConnectionString {
        var words = parameters
        words["dbname"] = database
        return try ConnectionString(words.keys.sorted().map { key in
            "\(key)='" + words[key]!.replacing("\\", with: "\\\\").replacing("'", with: "\\'") + "'"
        }.joined(separator: " "))
    }

    public var host: String { parameters["host"] ?? parameters["hostaddr"] ?? "localhost" }
    public var port: Int? { parameters["port"].flatMap { Int($0) } }
    public var user: String? { parameters["user"] }
    public var database: String? { parameters["dbname"] }
    public var sslMode: String? { parameters["sslmode"] }
    public var hasPassword: Bool { !(parameters["password"] ?? "").isEmpty }

    /// Port 6543 is where Supabase's pooler answers in transaction mode.
    public var looksLikeTransactionPooler: Bool { port == 6543 }

    /// A safe rendering for logs and errors: `postgresql://user@host:port/db?sslmode=…`, never the password.
    public var description: String {
        var text = "postgresql://"
        if let user { text += user + (hasPassword ? ":***" : "") + "@" }
        text += host
        if let port { text += ":\(port)" }
        text += "/" + (database ?? "")
        if let sslMode { text += "?sslmode=" + sslMode }
        // A password libpq read into another field (a slip in the string) is masked here too.
        return SecretRedactor.redact(text)
    }
}

extension String {
    /// libpq's message without the line break (and spaces) it ends with.
    func trimmingTrailingNewlines() -> String { trimming(in: "\n ", .end) }
}
