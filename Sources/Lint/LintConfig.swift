import Config

/// `[lint]`, declared where it is read.
public enum LintConfig {
    /// Below this many rows (`pg_class.reltuples`) a lock-heavy statement is information, not a blocking finding: its
    /// lock lasts moments.
    public static let smallTableRows = ConfigKey("lint", "small_table_rows", .integer(0...1_000_000_000), default: 10_000,
                                                 takes: "a whole number of rows from 0 to 1000000000: tables with fewer rows are small enough to lock")

    public static let section = ConfigSection("lint", keys: [smallTableRows])
}
