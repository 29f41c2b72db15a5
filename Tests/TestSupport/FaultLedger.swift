import Foundation

/// The figures a fault or load test reports (runs, faults injected, objects checked, losses) for the closing table
/// that `scripts/test.sh` prints: one JSON line each, appended to the file named by `STEWARD_FAULT_LEDGER`.
public enum FaultLedger {
    /// Appends one scenario's figures; a no-op when no ledger is set (a test run by hand).
    ///
    /// `cases` counts generated or borrowed inputs tried against a promise (property, differential and fuzz
    /// tests); `secretsFound` counts secrets seen in anything Steward printed or stored; `crashes` counts
    /// processes that trapped or died on a signal they did not ask for. Losses, secrets and crashes must be 0.
    /// For scenarios where something can be lost (objects deleted, migrations half applied, requests unanswered):
    /// `losses` is counted from what the test saw, never written as a constant.
    public static func record(
        _ scenario: String, runs: Int, faults: Int, objectsChecked: Int, losses: Int,
        cases: Int = 0, secretsFound: Int = 0, crashes: Int = 0
    ) {
        append(["scenario": scenario, "runs": runs, "faults": faults, "objects_checked": objectsChecked, "losses": losses,
                "cases": cases, "secrets_found": secretsFound, "crashes": crashes])
    }

    /// Appends the figures of a check that tries inputs against a promise where nothing can be lost (a parser, a
    /// round trip, a scan for secrets): it has no losses column, so its zero never counts as evidence that nothing
    /// was lost. Its failures fail the test itself; secrets and crashes still count.
    public static func check(
        _ scenario: String, runs: Int, faults: Int = 0, objectsChecked: Int = 0,
        cases: Int, secretsFound: Int = 0, crashes: Int = 0
    ) {
        append(["scenario": scenario, "kind": "check", "runs": runs, "faults": faults, "objects_checked": objectsChecked,
                "cases": cases, "secrets_found": secretsFound, "crashes": crashes])
    }

    private static func append(_ line: [String: Any]) {
        guard let path = ProcessInfo.processInfo.environment["STEWARD_FAULT_LEDGER"] else { return }
        guard var data = try? JSONSerialization.data(withJSONObject: line, options: [.sortedKeys]) else { return }
        data.append(0x0A)
        // O_APPEND: each short line lands whole even when tests record at the same time.
        let fd = open(path, O_WRONLY | O_CREAT | O_APPEND, 0o644)
        guard fd >= 0 else { return }
        defer { close(fd) }
        _ = data.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
    }
}
