import FileSystem
import Foundation
import Testing
import TestSupport

/// The files Steward writes (`apple-secret generate --out`, the metrics textfile) go through `AtomicFile`:
/// never through a link, never over another user's file, never into a folder others could change.
@Suite("files Steward writes")
struct FileWriteTests {
    /// What may already be at a target path.
    enum Target: CaseIterable {
        case absent, ownFile, hardLinkToRootFile, othersFile, linkToRootFile, danglingLink, linkToFolder, folder, fifo

        /// Safe to replace: nothing there, or a regular file of ours (a second hard link is just a name).
        var replaceable: Bool { [.absent, .ownFile, .hardLinkToRootFile].contains(self) }
    }

    /// Kind, inode and contents of what is at `path`, to tell whether anything changed.
    func snapshot(_ path: String) -> String {
        var info = stat()
        guard lstat(path, &info) == 0 else { return "absent" }
        let contents = info.st_mode & S_IFMT == S_IFREG ? ((try? Data(contentsOf: URL(fileURLWithPath: path)).base64EncodedString()) ?? "?") : ""
        return "\(info.st_mode) \(info.st_uid) \(info.st_ino) \(contents)"
    }

    func names(_ folder: String) -> Set<String> { Set((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []) }

    @Test("generated folders and targets: a write happens exactly when it is safe, and a refusal changes nothing")
    func generatedTargets() throws {
        var random = SeededGenerator.fromEnvironment()
        print("AtomicFile generated targets: seed \(random.seed) (STEWARD_TEST_SEED replays it)")
        let base = NSTemporaryDirectory() + "steward-atomic-\(UUID().uuidString.prefix(8))"
        try #require(mkdir(base, 0o755) == 0 && chmod(base, 0o755) == 0)
        defer { try? FileManager.default.removeItem(atPath: base) }
        let victim = base + "/root-file"
        let victimText = "root's own file\n"
        try victimText.write(toFile: victim, atomically: false, encoding: .utf8)
        let folderModes: [mode_t] = [0o700, 0o755, 0o775, 0o777, 0o1777, 0o1775, 0o730, 0o750]
        let cases = 2000
        var wrong: [String] = []
        for n in 0..<cases {
            let folderMode = folderModes.randomElement(using: &random)!
            let folderOwner: uid_t = Int.random(in: 0..<5, using: &random) == 0 ? 65534 : 0
            let target = Target.allCases.randomElement(using: &random)!
            let mode: UInt32 = Bool.random(using: &random) ? 0o600 : 0o644
            let folder = base + "/case-\(n)"
            let name = "out-\(n).prom"
            let path = folder + "/" + name
            mkdir(folder, 0o700)
            switch target {
            case .absent: break
            case .ownFile:
                try "old\n".write(toFile: path, atomically: false, encoding: .utf8)
                chmod(path, [0o600, 0o644, 0o666, 0o400].randomElement(using: &random)!)
            case .hardLinkToRootFile: link(victim, path)
            case .othersFile:
                try "theirs\n".write(toFile: path, atomically: false, encoding: .utf8)
                chown(path, 65534, 65534)
            case .linkToRootFile: symlink(victim, path)
            case .danglingLink: symlink(folder + "/nowhere", path)
            case .linkToFolder: symlink(base, path)
            case .folder: mkdir(path, 0o755)
            case .fifo: mkfifo(path, 0o666)
            }
            let ownLeftover = Bool.random(using: &random) ? AtomicFile.temporaryPrefix(name) + "1-2" : nil
            let theirLeftover = Bool.random(using: &random) ? AtomicFile.temporaryPrefix(name) + "3-4" : nil
            if let ownLeftover { try #require(FileManager.default.createFile(atPath: folder + "/" + ownLeftover, contents: Data("half".utf8), attributes: [.posixPermissions: 0o600])) }
            if let theirLeftover {
                try #require(FileManager.default.createFile(atPath: folder + "/" + theirLeftover, contents: Data("x".utf8), attributes: [.posixPermissions: 0o600]))
                chown(folder + "/" + theirLeftover, 65534, 65534)
            }
            chmod(folder, folderMode)
            chown(folder, folderOwner, folderOwner == 0 ? 0 : 65534)
            let before = snapshot(path)
            let namesBefore = names(folder)
            let data = (0..<Int.random(in: 0...3000, using: &random)).map { _ in UInt8.random(in: 0...255, using: &random) }
            let safeFolder = folderOwner == 0 && (folderMode & 0o022 == 0 || folderMode & 0o1000 != 0)
            let expectWrite = safeFolder && target.replaceable
            var refusal: FileSystemError?
            do { try AtomicFile.write(data, to: path, mode: mode) } catch { refusal = error }
            var problems: [String] = []
            if (try? String(contentsOfFile: victim, encoding: .utf8)) != victimText { problems.append("root's file changed") }
            if expectWrite {
                var info = stat()
                if let refusal { problems.append("refused: \(refusal)") }
                else if lstat(path, &info) != 0 || info.st_mode & S_IFMT != S_IFREG { problems.append("no regular file written") }
                else {
                    if UInt32(info.st_mode & 0o7777) != mode { problems.append("mode \(String(info.st_mode & 0o7777, radix: 8))") }
                    if info.st_uid != 0 { problems.append("owner \(info.st_uid)") }
                    if (try? Data(contentsOf: URL(fileURLWithPath: path))) != Data(data) { problems.append("contents differ") }
                }
                var expected = Set([name])
                if let theirLeftover { expected.insert(theirLeftover) }
                if names(folder) != expected { problems.append("folder holds \(names(folder).sorted()), expected \(expected.sorted())") }
            } else {
                if refusal == nil { problems.append("written although unsafe") }
                if snapshot(path) != before { problems.append("target changed") }
                if names(folder) != namesBefore { problems.append("folder changed: \(names(folder).sorted())") }
            }
            if !problems.isEmpty {
                wrong.append("case \(n): folder \(String(folderMode, radix: 8)) uid \(folderOwner), \(target), mode \(String(mode, radix: 8)): \(problems.joined(separator: "; "))")
            }
        }
        #expect(wrong.isEmpty, "seed \(random.seed): \(wrong.count) of \(cases) wrong, first: \(wrong.prefix(5))")
        FaultLedger.record("files written through links, over others' files, in shared folders (generated)", runs: cases, faults: cases,
                           objectsChecked: cases, losses: wrong.count, cases: cases)
    }

    @Test("a folder on the way that another user could change, or reached through their link, is refused")
    func foldersOnTheWay() throws {
        let base = NSTemporaryDirectory() + "steward-way-\(UUID().uuidString.prefix(8))"
        try #require(mkdir(base, 0o755) == 0 && chmod(base, 0o755) == 0)
        defer { try? FileManager.default.removeItem(atPath: base) }
        // base/shared (0777) holds base/shared/inner (root, 0755): whoever may write in shared could swap inner.
        mkdir(base + "/shared", 0o777); chmod(base + "/shared", 0o777)
        mkdir(base + "/shared/inner", 0o755)
        #expect(throws: FileSystemError.self) { try AtomicFile.write("x", to: base + "/shared/inner/f", mode: 0o644) }
        // A link made by another user that leads to a root folder.
        mkdir(base + "/real", 0o755)
        symlink(base + "/real", base + "/theirs")
        lchown(base + "/theirs", 65534, 65534)
        do {
            try AtomicFile.write("x", to: base + "/theirs/f", mode: 0o644)
            Issue.record("wrote through another user's link")
        } catch {
            #expect(error.message.contains("symbolic link owned by uid 65534"), "\(error)")
        }
        // Root's own link to the same folder is followed.
        symlink(base + "/real", base + "/ours")
        try AtomicFile.write("x", to: base + "/ours/f", mode: 0o644)
        #expect(try String(contentsOfFile: base + "/real/f", encoding: .utf8) == "x")
        #expect(!FileManager.default.fileExists(atPath: base + "/shared/inner/f"))
    }

    @Test("generate --out: a link to root's file, another user's file and a shared folder are refused; a write is whole, mode 600", .needsCluster)
    func secretOut() throws {
        try AppleWorld.with { w in
            let config = try w.config()
            let victim = w.folder + "/root-file"
            try "root's own file\n".write(toFile: victim, atomically: false, encoding: .utf8)
            let link = w.folder + "/link.jwt"
            #expect(symlink(victim, link) == 0)
            let viaLink = try w.steward(["apple-secret", "generate", "--out", link], config: config)
            #expect(viaLink.exitCode != 0)
            #expect(viaLink.stderr.contains("is a symbolic link"), "\(viaLink.output)")
            #expect(try String(contentsOfFile: victim, encoding: .utf8) == "root's own file\n")

            let theirs = w.folder + "/theirs.jwt"
            try #require(FileManager.default.createFile(atPath: theirs, contents: Data(), attributes: [.posixPermissions: 0o644]))
            chown(theirs, 65534, 65534)
            let overTheirs = try w.steward(["apple-secret", "generate", "--out", theirs], config: config)
            #expect(overTheirs.exitCode != 0)
            #expect(overTheirs.stderr.contains("belongs to uid 65534"), "\(overTheirs.output)")
            #expect((try? Data(contentsOf: URL(fileURLWithPath: theirs)))?.isEmpty == true, "the secret was handed to another user")

            let shared = w.folder + "/shared"
            mkdir(shared, 0o777)
            chmod(shared, 0o777)
            let inShared = try w.steward(["apple-secret", "generate", "--out", shared + "/s.jwt"], config: config)
            #expect(inShared.exitCode != 0)
            #expect(inShared.stderr.contains("writable by group or others"), "\(inShared.output)")

            let out = w.folder + "/secret.jwt"
            let leftover = w.folder + "/" + AtomicFile.temporaryPrefix("secret.jwt") + "99-1"
            try #require(FileManager.default.createFile(atPath: leftover, contents: Data("eyJ".utf8), attributes: [.posixPermissions: 0o600]))
            let ok = try w.steward(["apple-secret", "generate", "--out", out], config: config)
            #expect(ok.exitCode == 0, "\(ok.output)")
            var info = stat()
            #expect(lstat(out, &info) == 0 && info.st_mode & 0o7777 == 0o600)
            let token = try String(contentsOfFile: out, encoding: .utf8)
            #expect(token.split(separator: ".").count == 3)
            #expect(!FileManager.default.fileExists(atPath: leftover), "a crashed write's leftover stayed")
            #expect(names(w.folder).allSatisfy { !$0.hasPrefix(".secret.jwt.tmp-") })
        }
    }

    @Test("generate --out killed at random moments: the secret is never readable by others, never half written", .needsCluster)
    func killedMidWrite() throws {
        try AppleWorld.with { w in
            var random = SeededGenerator.fromEnvironment()
            print("generate --out kills: seed \(random.seed)")
            let config = try w.config()
            let out = w.folder + "/secret.jwt"
            let arguments = ["apple-secret", "generate", "--out", out, "--config", config, "--database-url", w.db.url]
            let started = Date()
            #expect(try StewardProcess.run(arguments).exitCode == 0)
            let whole = Date().timeIntervalSince(started)
            let kills = 25
            var exposed: [String] = [], torn = 0
            for _ in 0..<kills {
                let running = try StewardProcess.start(arguments)
                usleep(UInt32(Double.random(in: 0...whole, using: &random) * 1_000_000))
                running.kill(SIGKILL)
                _ = running.wait(timeout: 10)
                for entry in names(w.folder) where entry.hasPrefix("secret.jwt") || entry.hasPrefix(".secret.jwt") {
                    var info = stat()
                    guard lstat(w.folder + "/" + entry, &info) == 0 else { continue }
                    if info.st_mode & 0o077 != 0 { exposed.append("\(entry) \(String(info.st_mode & 0o777, radix: 8))") }
                    if entry == "secret.jwt" {
                        let parts = ((try? String(contentsOfFile: out, encoding: .utf8)) ?? "").split(separator: ".")
                        if parts.count != 3 || parts[2].count < 80 { torn += 1 }
                    }
                }
            }
            #expect(exposed.isEmpty, "seed \(random.seed): \(exposed)")
            #expect(torn == 0)
            FaultLedger.record("apple-secret generate --out killed (SIGKILL) at random moments", runs: kills + 1, faults: kills,
                               objectsChecked: kills, losses: exposed.count + torn, cases: kills)
        }
    }

    @Test("the metrics textfile is never written through a link or over another user's file", .needsCluster)
    func metricsTextfile() throws {
        try withTestDatabase { db in
            let folder = NSTemporaryDirectory() + "steward-metrics-\(UUID().uuidString.prefix(8))"
            try #require(mkdir(folder, 0o755) == 0 && chmod(folder, 0o755) == 0)
            defer { try? FileManager.default.removeItem(atPath: folder) }
            let victim = folder + "/root-file"
            try "root's own file\n".write(toFile: victim, atomically: false, encoding: .utf8)
            let link = folder + "/steward.prom"
            #expect(symlink(victim, link) == 0)
            let theirs = folder + "/theirs.prom"
            try #require(FileManager.default.createFile(atPath: theirs, contents: Data("theirs\n".utf8), attributes: [.posixPermissions: 0o644]))
            chown(theirs, 65534, 65534)
            for (path, refusal) in [(link, "is a symbolic link"), (theirs, "belongs to uid 65534")] {
                let daemon = try DaemonProcess(databaseURL: db.url, config: "[metrics]\ntextfile = \(path)\ninterval = 1\n")
                #expect(daemon.waitUntil(leader: nil, timeout: 20))
                #expect(eventually(10) { daemon.process.stderrSoFar.contains(refusal) }, "\(daemon.process.stderrSoFar.suffix(2000))")
                #expect(daemon.process.stderrSoFar.contains("could not write the metrics file"))
                #expect(daemon.stop().exitCode == 0)
            }
            #expect(try String(contentsOfFile: victim, encoding: .utf8) == "root's own file\n")
            #expect(try String(contentsOfFile: theirs, encoding: .utf8) == "theirs\n")
            var info = stat()
            #expect(lstat(link, &info) == 0 && info.st_mode & S_IFMT == S_IFLNK)
        }
    }
}
