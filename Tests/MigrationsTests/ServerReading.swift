import Foundation
import TestSupport

/// How the server itself splits and runs SQL texts, asked through `Tests/Fuzz/server-statements.py`: each text is
/// sent whole with the simple protocol (the server splits it) and as Steward's pieces with the extended protocol.
struct ServerReading {
    /// One text and the statements Steward read in it.
    struct Case {
        let id: Int
        let text: String
        let pieces: [String]
    }

    /// What the server answered for one case: `[command tag, rows]` per statement, on each side.
    struct Answer {
        let server: [Any]
        let pieces: [Any]

        /// True when running the pieces one by one gave exactly what the server's own split gave.
        var agrees: Bool { NSArray(array: server).isEqual(to: pieces) }

        /// True when the whole text failed on the server with the same error (code and message) that the pieces met
        /// last: the server's implicit transaction drops the answers before the error, so only the error is compared.
        var failsAlike: Bool {
            guard server.count == 1, let error = (server[0] as? [Any])?.first as? String, error.hasPrefix("ERROR"),
                  let last = pieces.last as? [Any] else { return false }
            return (last.first as? String) == error
        }

        /// True when the server refused the whole text while reading it, before running anything: a syntax error,
        /// an invalid escape or character, or a statement too deeply nested.
        var isSyntaxError: Bool {
            guard server.count == 1, let error = (server[0] as? [Any])?.first as? String else { return false }
            return ["ERROR 42601 syntax error", "ERROR 42601 unterminated", "ERROR 42601 invalid Unicode", "ERROR 22025 ",
                    "ERROR 22021 ", "ERROR 54001 ", "ERROR 42601 trailing junk", "ERROR 42601 unsafe use of string constant",
                    "ERROR 42601 zero-length delimited identifier", "ERROR 42601 subquery in FROM must have an alias"]
                .contains { error.hasPrefix($0) }
        }

        var description: String {
            let text = { (value: Any) in
                (try? JSONSerialization.data(withJSONObject: value)).map { String(decoding: $0, as: UTF8.self) } ?? "?"
            }
            return "server read: \(text(server))\n  Steward's pieces gave: \(text(pieces))"
        }
    }

    /// Runs `cases` (whole texts on `wholeURL`, pieces on `piecesURL`) and returns the answers by case id.
    static func ask(wholeURL: String, piecesURL: String, _ cases: [Case]) throws -> [Int: Answer] {
        let folder = NSTemporaryDirectory() + "steward-server-reading-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        var input = Data()
        for c in cases {
            input += try JSONSerialization.data(withJSONObject: ["id": c.id, "text": c.text, "pieces": c.pieces])
            input.append(0x0A)
        }
        try input.write(to: URL(fileURLWithPath: folder + "/cases.jsonl"))
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", TestEnvironment.root + "/Tests/Fuzz/server-statements.py", wholeURL, piecesURL, folder + "/cases.jsonl"]
        // Files, not pipes: a full pipe would stall the helper while this test waits for it.
        _ = FileManager.default.createFile(atPath: folder + "/out.jsonl", contents: nil)
        _ = FileManager.default.createFile(atPath: folder + "/err.txt", contents: nil)
        let out = try FileHandle(forWritingTo: URL(fileURLWithPath: folder + "/out.jsonl"))
        let err = try FileHandle(forWritingTo: URL(fileURLWithPath: folder + "/err.txt"))
        process.standardOutput = out
        process.standardError = err
        try process.run()
        process.waitUntilExit()
        try out.close()
        try err.close()
        guard process.terminationStatus == 0 else {
            let message = (try? String(contentsOfFile: folder + "/err.txt", encoding: .utf8)) ?? ""
            throw CocoaError(.executableLoad, userInfo: [NSLocalizedDescriptionKey: "server-statements.py failed: \(message)"])
        }
        var answers: [Int: Answer] = [:]
        let output = try String(contentsOfFile: folder + "/out.jsonl", encoding: .utf8)
        for line in output.split(separator: "\n") {
            guard let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                  let id = object["id"] as? Int, let server = object["server"] as? [Any], let pieces = object["pieces"] as? [Any]
            else { continue }
            answers[id] = Answer(server: server, pieces: pieces)
        }
        return answers
    }
}
