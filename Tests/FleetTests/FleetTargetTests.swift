#if canImport(Glibc)
import Glibc
#endif
import Config
import Fleet
import Foundation
import Testing

@Suite("Fleet targets from steward.ini")
struct FleetTargetTests {
    /// The fleet's own section and the targets' family, beside a section a single project has.
    static let schema = ConfigSchema(sections: [FleetConfig.section, ConfigSection("database", keys: [ConfigKey("database", "url", .text, default: "", takes: "a URL")])],
                                     families: ["target"])

    static func config(_ text: String) throws -> StewardConfig {
        try StewardConfig.parse(path: "/etc/steward/fleet.ini", bytes: Array(text.utf8), schema: Self.schema)
    }

    @Test("targets, stages and per-target folders are read in the file's order; a single-project config has none")
    func reading() throws {
        let config = try Self.config("""
            [fleet]
            stages = canary, production
            [target.alpha]
            url = postgresql://steward@alpha.example/postgres
            stage = canary
            [target.beta]
            url = host=beta.example dbname=postgres
            password_file = /etc/steward/beta-password
            stage = production
            migrations_dir = tenants/beta
            include = sql/optional/a, sql/optional/b
            """)
        #expect(config[FleetConfig.stages] == ["canary", "production"])
        let targets = try FleetTarget.read(config)
        #expect(targets.map(\.name) == ["alpha", "beta"])
        #expect(targets[1].passwordFile == "/etc/steward/beta-password")
        #expect(targets[1].migrationsDirectory == "tenants/beta")
        #expect(targets[1].include == ["sql/optional/a", "sql/optional/b"])
        #expect(targets[0].include == nil)
        #expect(targets[1].lines["stage"] == 9)
        let single = try Self.config("[database]\nurl = postgresql://x/postgres\n")
        #expect(try FleetTarget.read(single).isEmpty)
    }

    @Test("mistakes name file, line and key", arguments: [
        ("[target.a]\nurl = postgresql://h/a\ncolour = blue\n", "/etc/steward/fleet.ini:3: [target.a] colour: unknown key"),
        ("[target.a]\nstage = canary\n", "/etc/steward/fleet.ini:1: [target.a] url: every target needs a url"),
        // Written twice, its keys split: the message names the first header, whichever came last.
        ("[target.a]\nstage = canary\n[fleet]\nstages = canary\n[target.a]\n", "/etc/steward/fleet.ini:1: [target.a] url: every target needs a url"),
        ("[fleet]\nstages = canary\n[target.a]\n[target.a]\nstage = canary\n", "/etc/steward/fleet.ini:3: [target.a] url: every target needs a url"),
        ("[fleet]\nstages = canary\n[target.a]\nurl = postgresql://h/a\nstage = production\n",
         "/etc/steward/fleet.ini:5: [target.a] stage: \"production\" is not one of [fleet] stages"),
        ("[target.a b]\nurl = x\n", "not a valid [section] name"),
        ("[target.a/b]\nurl = postgresql://h/a\n", "/etc/steward/fleet.ini:1: [target.a/b]: a target name is"),
        ("[target.a]\nurl = postgresql://h/a\npassword_file = credential:../x\n", "/etc/steward/fleet.ini:3: [target.a] password_file:"),
        ("[fleet]\nstages = canary, canary\n", "/etc/steward/fleet.ini:2: [fleet] stages:"),
        ("[target.p]\nurl = postgresql://h/p\nstage = production\n[target.c]\nurl = postgresql://h/c\nstage = canary\n",
         "/etc/steward/fleet.ini:3: [target.p] stage: \"production\" is a stage, but [fleet] stages does not list the stages' order"),
    ])
    func mistakes(_ text: String, _ expected: String) throws {
        do {
            _ = try FleetTarget.read(try Self.config(text))
            Issue.record("accepted: \(text)")
        } catch {
            #expect("\(error)".contains(expected), "\(error)")
        }
    }

    @Test("a target's password file is read at connect time, and no message quotes it")
    func passwordFile() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("fleet-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let secret = "fleet-secret-\(UUID().uuidString.prefix(8))"
        let path = dir + "/password"
        try (secret + "\n").write(toFile: path, atomically: false, encoding: .utf8)
        chmod(path, 0o644)
        let target = FleetTarget(name: "a", url: "postgresql://steward@127.0.0.1:1/a", passwordFile: path, file: "/etc/steward/fleet.ini",
                                 lines: ["password_file": 7])
        do {
            _ = try target.connectionString()
            Issue.record("a group-readable password file was accepted")
        } catch {
            #expect("\(error)".contains("/etc/steward/fleet.ini:7: [target.a] password_file:"), "\(error)")
            #expect("\(error)".contains("chmod 600"))
            #expect(!"\(error)".contains(secret))
        }
        chmod(path, 0o600)
        let connection = try target.connectionString()
        #expect(!connection.description.contains(secret))
        #expect(connection.description.contains(":***@"))
    }
}
