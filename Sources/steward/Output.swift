import StewardLog
import OutputText
import FileSystem

/// Writes command results to standard output and errors to standard error, unbuffered and whole, with every
/// known secret removed; an error is one line, its control characters escaped.
enum Output {
    static func print(_ text: String) {
        let clean = SecretRedactor.redact(text)
        FileDescriptorWriter.write(clean.hasSuffix("\n") ? clean : clean + "\n", to: 1)
    }

    static func error(_ text: String) {
        let lines = SecretRedactor.redact(text).split(separator: "\n", omittingEmptySubsequences: false).map { LogText.escaped(String($0)) }
        FileDescriptorWriter.write("steward: " + lines.joined(separator: "\n") + "\n", to: 2)
    }
}
