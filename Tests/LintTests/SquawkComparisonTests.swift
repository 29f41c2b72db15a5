import Foundation
import Lint
import Migrations
import Testing
import TestSupport

/// squawk-cli (installed by scripts/install-deps.sh) on the same corpus: where a rule is shared and the table is
/// large, squawk and Steward must name the same rules; where they differ, the corpus says why, and the test prints it.
@Suite("lint against squawk-cli on the same corpus", .needsCluster)
struct SquawkComparisonTests {
    /// squawk's rule names for one file, as its JSON reporter lists them. A transactional file is linted as
    /// migrate runs it: in one transaction (`--assume-in-transaction`).
    static func squawkRules(_ path: String, transactional: Bool) throws -> [String] {
        let result = try StewardProcess.runProgram("/usr/bin/env", ["squawk", "--reporter", "json", "--pg-version", "15"]
            + (transactional ? ["--assume-in-transaction"] : []) + [path], timeout: 60)
        #expect(result.exitCode == 0 || result.exitCode == 1, "squawk: \(result.output)")
        let violations = (try? JSONSerialization.jsonObject(with: Data(result.stdout.utf8))) as? [[String: Any]] ?? []
        return violations.compactMap { $0["rule_name"] as? String }
    }

    @Test("shared rules agree on large tables; every difference is listed with its reason")
    func compare() throws {
        let version = try StewardProcess.runProgram("/usr/bin/env", ["squawk", "--version"], timeout: 30)
        try #require(version.exitCode == 0, "squawk-cli is not installed (scripts/install-deps.sh installs it): \(version.output)")
        let shared = Set(LintRule.all.filter(\.squawk).map(\.name))
        var agreed = 0
        var differences: [String] = []
        try LintTests.withCorpusDatabase { _, connection in
            for lintCase in LintCorpus.cases {
                let folder = try MigrationFolder(files: Dictionary(uniqueKeysWithValues: lintCase.files.map { ($0.name, $0.text) }))
                defer { folder.delete() }
                let files = try LintTests.files(lintCase)
                var squawk: [String] = []
                for file in files {
                    squawk += try Self.squawkRules(folder.path + "/" + file.fileName, transactional: file.transactional)
                }
                let report = try Linter(connection: connection).lint(files)
                let theirs = Set(squawk).intersection(shared)
                let ours = Set(report.findings.filter { $0.blocking }.map(\.rule)).intersection(shared)
                if let reason = lintCase.squawkDiffers {
                    let all = Set(report.findings.filter { $0.blocking }.map(\.rule)).sorted()
                    differences.append("\(lintCase.name): Steward blocks \(all), squawk says \(Set(squawk).intersection(shared).sorted()) — \(reason)")
                } else {
                    #expect(ours == theirs, "\(lintCase.name): Steward \(ours.sorted()), squawk \(theirs.sorted())\n\(report.text)")
                    if ours == theirs { agreed += 1 }
                }
            }
        }
        print("squawk \(version.stdout.trimmingCharacters(in: .whitespacesAndNewlines)): \(agreed) cases agree on shared rules; \(differences.count) differ by design:")
        for difference in differences { print("  - \(difference)") }
        #expect(agreed >= 15)
    }
}
