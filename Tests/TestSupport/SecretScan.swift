import Foundation
import OutputText

/// Looks for secrets in what Steward printed and stored: every secret in every form it could come back in
/// (as written, percent-encoded upper and lower case, percent-decoded, `+` for spaces, JSON- and conninfo-escaped),
/// in every text given. One fixture for every failure-path test that must not leak.
public struct SecretScan: Sendable {
    /// One secret seen where it must not be.
    public struct Finding: Sendable, CustomStringConvertible {
        /// The secret's label (`database password`, …), never the secret.
        public let secret: String
        /// Which form matched (`raw`, `percent-encoded`, …).
        public let form: String
        /// Where: the label given with the text (`migrate stderr`, `steward.job_runs.error`, …).
        public let place: String
        public var description: String { "\(secret) (\(form)) in \(place)" }
    }

    /// Labelled secrets, as loaded by Steward.
    public private(set) var secrets: [(label: String, value: String)] = []
    /// Texts scanned so far, and what was found.
    public private(set) var textsScanned = 0
    public private(set) var findings: [Finding] = []

    public init(secrets: [(label: String, value: String)] = []) {
        for (label, value) in secrets { add(label, value) }
    }

    /// Adds a secret to look for.
    public mutating func add(_ label: String, _ value: String) {
        guard !value.isEmpty else { return }
        secrets.append((label, value))
    }

    /// Every form `value` may take in output, labelled.
    public static func forms(of value: String) -> [(form: String, text: String)] {
        var forms: [(String, String)] = [("raw", value)]
        if let decoded = value.removingPercentEncoding, decoded != value { forms.append(("percent-decoded", decoded)) }
        let unreserved = CharacterSet(charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
        for base in forms.map(\.1) {
            if let upper = base.addingPercentEncoding(withAllowedCharacters: unreserved), upper != base {
                forms.append(("percent-encoded", upper))
                forms.append(("percent-encoded lower-case", lowercasingHex(upper)))
                forms.append(("form-encoded", upper.replacingOccurrences(of: "%20", with: "+")))
            }
            let json = base.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
            if json != base { forms.append(("JSON-escaped", json)) }
            let conninfo = base.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "'", with: "\\'")
            if conninfo != base { forms.append(("conninfo-escaped", conninfo)) }
        }
        return forms.filter { !$0.1.isEmpty }
    }

    static func lowercasingHex(_ text: String) -> String {
        var out = ""
        var pending = 0
        for c in text {
            if c == "%" { pending = 2; out.append(c); continue }
            if pending > 0 { out += c.lowercased(); pending -= 1 } else { out.append(c) }
        }
        return out
    }

    /// Scans `text` (labelled `place`) for every secret; returns the findings of this text.
    @discardableResult
    public mutating func scan(_ text: String, place: String) -> [Finding] {
        textsScanned += 1
        var found: [Finding] = []
        for (label, value) in secrets {
            for (form, needle) in Self.forms(of: value) where text.utf8.count >= needle.utf8.count {
                if Data(text.utf8).range(of: Data(needle.utf8)) != nil {
                    found.append(Finding(secret: label, form: form, place: place))
                    break
                }
            }
        }
        findings += found
        return found
    }

    /// Scans a finished process's standard output and error.
    @discardableResult
    public mutating func scan(_ result: StewardProcess.Result, place: String) -> [Finding] {
        scan(result.stdout, place: place + " stdout") + scan(result.stderr, place: place + " stderr")
    }
}
