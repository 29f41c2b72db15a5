import Foundation
import Postgres
import Testing
import TestSupport

@Suite("username-check collision details, in large groups of generated look-alikes", .needsCluster)
struct UsernameCollisionDetailTests {
    /// A username built from `base` (Latin a c e o p and other letters): each of a c e o p may become its Cyrillic
    /// twin (another normal form, the same skeleton), and any letter upper case (the same normal form).
    static func variant(of base: String, _ random: inout SeededGenerator) -> (name: String, folded: String) {
        let twins: [Character: Character] = ["a": "а", "c": "с", "e": "е", "o": "о", "p": "р"]
        var folded = ""
        var name = ""
        for var letter in base {
            if let twin = twins[letter], Int.random(in: 0..<4, using: &random) == 0 { letter = twin }
            folded.append(letter)
            name += letter.isASCII && Int.random(in: 0..<3, using: &random) == 0 ? letter.uppercased() : String(letter)
        }
        return (name, folded)
    }

    /// The plain definition: for each profile whose key others share, the first five others by profile id.
    static func expected(_ profiles: [(id: String, name: String, folded: String, base: String)]) -> [String: String] {
        var out: [String: String] = [:]
        let sorted = profiles.sorted { $0.id < $1.id }
        for p in sorted {
            let same = sorted.filter { $0.folded == p.folded && $0.id != p.id }
            if !same.isEmpty {
                out[p.id + "/case_duplicate"] = "same after case folding and NFKC as " + same.prefix(5).map { "\($0.name) (\($0.id))" }.joined(separator: ", ")
            }
            let alike = sorted.filter { $0.base == p.base && $0.folded != p.folded }
            if !alike.isEmpty {
                out[p.id + "/confusable"] = "looks like " + alike.prefix(5).map { "\($0.name) (\($0.id))" }.joined(separator: ", ")
            }
        }
        return out
    }

    @Test("each profile's detail names the first five others by profile id: groups of 1 to 25, many normal forms a skeleton")
    func generatedGroups() throws {
        var random = SeededGenerator.fromEnvironment()
        print("username collision details: seed \(random.seed) (STEWARD_TEST_SEED replays it)")
        let bases = ["peace", "cope", "capex", "space", "opera", "acorn", "bzzt", "poke"]
        try withTestDatabase { db in
            _ = try StewardProcess.run(["migrate", "--database-url", db.url, "--migrations", TestEnvironment.migrationsDirectory])
            let admin = try db.connectAsAdmin()
            var profiles: [(id: String, name: String, folded: String, base: String)] = []
            var index = 0, used: Set<String> = []
            for base in bases {
                for _ in 0..<Int.random(in: 1...25, using: &random) {
                    let (name, folded) = Self.variant(of: base, &random)
                    guard used.insert(name).inserted else { continue }   // usernames are unique in the table
                    let id = try db.signUp(email: "u\(index)@example.com")
                    index += 1
                    try admin.query("update public.profiles set username = $1 where id = $2", [name, id])
                    profiles.append((id, name, folded, base))
                }
            }
            let config = NSTemporaryDirectory() + "steward-\(UUID().uuidString).ini"
            try "[job.username-check]\nschedule = @daily\npage_size = 100\n".write(toFile: config, atomically: true, encoding: .utf8)
            defer { try? FileManager.default.removeItem(atPath: config) }
            let result = try StewardProcess.run(["job", "run", "username-check", "--database-url", db.url, "--config", config, "--json"])
            #expect(result.exitCode == 0, "\(result.output)")
            var found: [String: String] = [:]
            for row in try db.connect().query("select profile_id::text, rule, detail from steward.username_findings where rule in ('case_duplicate', 'confusable')").rows {
                found[try row.decode(String.self, at: 0) + "/" + row.decode(String.self, at: 1)] = try row.decode(String.self, at: 2)
            }
            let wanted = Self.expected(profiles)
            #expect(Set(found.keys) == Set(wanted.keys), "seed \(random.seed)")
            for (key, detail) in wanted where found[key] != detail {
                Issue.record("\(key): \(found[key] ?? "none") instead of \(detail) (seed \(random.seed))")
            }
        }
    }
}
