import Logging

/// Writes command results to standard output and errors to standard error, unbuffered and whole.
enum Output {
    static func print(_ text: String) { FileDescriptorWriter.write(text.hasSuffix("\n") ? text : text + "\n", to: 1) }

    static func error(_ text: String) { FileDescriptorWriter.write("steward: " + text + "\n", to: 2) }
}
