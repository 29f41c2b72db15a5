import Foundation

// Build-time tool of the EmbedSchema plugin: `EmbedSchemaTool MANIFEST FOLDER PREFIX OUTPUT` writes OUTPUT, a Swift
// file holding each `.sql` file the manifest names (version and path under FOLDER a line; `#` starts a comment), each
// named by its path under `Sources/` (`PREFIX/<file>`), where a test finds it to run with `psql -f`;
// `EmbedSchemaTool --files OUTPUT FILE...` writes OUTPUT holding each FILE as a static string of `EmbeddedSQL`.

/// A Swift string literal holding `text` exactly.
func literal(_ text: String) -> String {
    var out = "\""
    for scalar in text.unicodeScalars {
        switch scalar {
        case "\\": out += "\\\\"
        case "\"": out += "\\\""
        case "\n": out += "\\n"
        case "\r": out += "\\r"
        case "\t": out += "\\t"
        case _ where scalar.value < 0x20 || scalar.value == 0x7F: out += "\\u{\(String(scalar.value, radix: 16))}"
        default: out.unicodeScalars.append(scalar)
        }
    }
    return out + "\""
}

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("EmbedSchemaTool: \(message)\n".utf8))
    exit(1)
}

/// `candidate-page.sql` as a Swift name: `candidatePage`.
func swiftName(_ path: String) -> String {
    let base = path.split(separator: "/").last.map(String.init) ?? path
    let words = base.dropLast(".sql".count).split(whereSeparator: { !$0.isLetter && !$0.isNumber })
    guard let first = words.first, first.first?.isLetter == true else { fail("\(path): a file name must start with a letter") }
    return first.lowercased() + words.dropFirst().map { $0.prefix(1).uppercased() + $0.dropFirst() }.joined()
}

let arguments = CommandLine.arguments
if arguments.count >= 2 && arguments[1] == "--files" {
    guard arguments.count >= 3 else { fail("usage: EmbedSchemaTool --files OUTPUT FILE...") }
    var members: [String] = []
    var names: Set<String> = []
    for path in arguments.dropFirst(3) {
        guard var sql = try? String(contentsOfFile: path, encoding: .utf8) else { fail("cannot read \(path)") }
        // The file's last line break ends the file, not the SQL: the text is what comes before it.
        if sql.hasSuffix("\n") { sql.removeLast() }
        let name = swiftName(path)
        guard names.insert(name).inserted else { fail("\(path): another file is also embedded as \(name)") }
        let file = path.split(separator: "/").last.map(String.init) ?? path
        members.append("    /// `\(file)`.\n    static let \(name) = \(literal(sql))")
    }
    let swift = """
        // Generated at build time from this module's .sql files; edit those, not this.
        enum EmbeddedSQL {
        \(members.joined(separator: "\n"))
        }

        """
    do { try swift.write(toFile: arguments[2], atomically: true, encoding: .utf8) } catch { fail("cannot write \(arguments[2]): \(error)") }
    exit(0)
}
guard arguments.count == 5 else { fail("usage: EmbedSchemaTool MANIFEST FOLDER PREFIX OUTPUT") }
let (manifest, folder, prefix, output) = (arguments[1], arguments[2], arguments[3], arguments[4])
guard let text = try? String(contentsOfFile: manifest, encoding: .utf8) else { fail("cannot read \(manifest)") }
var entries: [String] = []
var last = 0
for (index, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
    let trimmed = line.trimmingCharacters(in: .whitespaces)
    if trimmed.isEmpty || trimmed.hasPrefix("#") { continue }
    let fields = trimmed.split(separator: " ", omittingEmptySubsequences: true)
    guard fields.count == 2, let version = Int(fields[0]), version == last || version == last + 1 else {
        fail("\(manifest):\(index + 1): expected a version (the last one or the next) and a path")
    }
    last = version
    let path = String(fields[1])
    guard let sql = try? String(contentsOfFile: folder + "/" + path, encoding: .utf8) else { fail("\(manifest):\(index + 1): cannot read \(path)") }
    entries.append("        .init(version: \(version), file: \(literal(prefix + "/" + path)), sql: \(literal(sql))),")
}
let swift = """
    // Generated at build time from versions.txt and the .sql files it names; edit those, not this.
    extension StewardSchema {
        static let embedded: [File] = [
    \(entries.joined(separator: "\n"))
        ]
    }

    """
do { try swift.write(toFile: output, atomically: true, encoding: .utf8) } catch { fail("cannot write \(output): \(error)") }
