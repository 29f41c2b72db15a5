// swift-tools-version:6.0
import PackageDescription

/// One module per job, each on top of the job framework (`Jobs`); the executable depends on all of them and lists
/// the job types once, in `Sources/steward/StewardJobs.swift`.
let jobModules: [Target] = [
    .target(name: "PruneHistory", dependencies: ["Config", "Jobs", "Postgres"]),
    .target(name: "UsernameCheck", dependencies: ["Config", "Jobs", "OutputText", "Postgres", "Usernames"],
            exclude: ["case-duplicates.sql", "confusables.sql"], plugins: ["EmbedSchema"]),
    .target(name: "OrphanAvatars", dependencies: ["BlockingExecutor", "Config", "HTTP", "Jobs", "OutputText", "StewardLog", "Postgres", "Storage"],
            exclude: ["bucket-counts.sql", "candidate-page.sql", "candidates.sql", "dangling-references.sql", "reference-columns.sql"],
            plugins: ["EmbedSchema"]),
    .target(name: "AppleSecret", dependencies: ["OutputText", "Alerts", "Apple", "Config", "LibCrypto", "HTTP", "Jobs", "StewardLog", "Postgres"]),
    .target(name: "SecurityAdvisor", dependencies: ["Advisor", "Alerts", "Config", "Jobs", "StewardLog", "Postgres"]),
    .target(name: "LegacyImport", dependencies: ["Config", "Jobs", "StewardLog", "Postgres"]),
]

/// Each job module's tests, in `Tests/<Module>Tests` (most run the job through the binary).
let jobTests: [Target] = jobModules.map { job in
    .testTarget(name: job.name + "Tests", dependencies: [.target(name: job.name), "Jobs", "Postgres", "Storage", "TestSupport", "steward"])
}

let package = Package(
    name: "Steward",
    products: [
        .executable(name: "steward", targets: ["steward"]),
    ],
    targets: [
        // C libraries from Debian, each behind one system-library target.
        .systemLibrary(
            name: "CPostgres",
            pkgConfig: "libpq",
            providers: [.apt(["libpq-dev"])]
        ),
        .systemLibrary(
            name: "COpenSSL",
            pkgConfig: "libcrypto",
            providers: [.apt(["libssl-dev"])]
        ),
        // PostgreSQL 15's own parser as a library (no .pc file: linked by name in the module map).
        .systemLibrary(name: "CPgQuery", providers: [.apt(["libpg-query-dev"])]),

        // One thin Swift layer over each C library; nothing above them imports C.
        .target(name: "Postgres", dependencies: ["CPostgres", "BlockingExecutor", "OutputText", "StewardLog", "TimeZones"]),
        .target(name: "LibCrypto", dependencies: ["COpenSSL"]),
        .target(name: "Config", dependencies: ["OutputText", "StewardLog"]),
        .target(name: "HTTP", dependencies: ["CCurl", "BlockingExecutor", "OutputText"]),
        .target(name: "SQLParser", dependencies: ["CPgQuery"]),

        // The threads every blocking C call runs on, off the cooperative pool and cancellable.
        .target(name: "BlockingExecutor"),

        // Concerns of Steward itself.
        // Text as Steward reads and prints it: log escaping, fixed point, dates, trimming.
        .target(name: "OutputText"),
        // JSON: the value, its compact text, parsing what peers send.
        .target(name: "StewardJSON", dependencies: ["OutputText"]),
        // Log lines: levels, sinks, the secret redactor.
        .target(name: "StewardLog", dependencies: ["StewardJSON", "FileSystem", "OutputText"]),
        .target(name: "Migrations", dependencies: ["OutputText", "StewardJSON", "BlockingExecutor", "Config", "Postgres", "LibCrypto", "StewardLog", "SQLParser", "StewardDatabase"],
                exclude: ["catalog-buckets.sql", "catalog-namespaces.sql", "catalog-snapshot.sql", "shadow-copy.sql"],
                plugins: ["EmbedSchema"]),
        // What each pending statement locks, on which table and for how long (scan, rewrite), judged against the live
        // catalog: `steward lint`, and the gate `migrate` runs before applying.
        .target(name: "Lint", dependencies: ["OutputText", "StewardJSON", "Config", "Migrations", "Postgres", "SQLParser"]),
        // Steward's footprint in the database: every advisory lock key it takes, and its own `steward` schema (the
        // .sql file of each table in schema/, embedded at build time in the order of schema/versions.txt, and applied).
        .target(name: "StewardDatabase", dependencies: ["Postgres"], exclude: ["schema"], plugins: ["EmbedSchema"]),
        .plugin(name: "EmbedSchema", capability: .buildTool(), dependencies: ["EmbedSchemaTool"]),
        .executableTarget(name: "EmbedSchemaTool"),
        // What Steward knows of the Supabase app's schema (advice, enforcement), kept out of the generic engine.
        .target(name: "SupabaseProject", dependencies: ["Advisor", "Migrations", "Postgres"]),
        .target(name: "CLI"),
        .target(name: "Scheduler", dependencies: ["OutputText", "TimeZones"]),
        // Time zones from the system's tzdata files, and the one owner of calendar arithmetic.
        .target(name: "TimeZones"),
        .target(name: "Advisor", dependencies: ["OutputText", "Postgres", "StewardLog"]),
        .target(name: "Storage", dependencies: ["OutputText", "StewardJSON", "BlockingExecutor", "Config", "HTTP", "StewardLog"],
                exclude: ["mention-decode.sql", "mention-patterns.sql", "mention-texts.sql", "reference-matches.sql", "reference-names.sql"],
                plugins: ["EmbedSchema"]),
        .target(name: "Apple", dependencies: ["OutputText", "StewardJSON", "BlockingExecutor", "LibCrypto", "HTTP"]),
        .target(name: "Alerts", dependencies: ["OutputText", "StewardJSON", "Config", "HTTP", "StewardLog", "Postgres"]),
        // The job framework; each job is a module of its own on top of it (`jobModules`, above).
        .target(name: "Jobs", dependencies: ["OutputText", "StewardJSON", "StewardDatabase", "Config", "StewardLog", "Postgres", "Scheduler"]),
        .target(name: "CSystem"),
        .target(name: "CUnicode"),
        // libcurl's headers (libcurl4-openssl-dev); the library itself is opened on first use.
        .target(name: "CCurl"),
        .target(name: "Usernames", dependencies: ["CUnicode", "OutputText"]),
        .target(name: "Control", dependencies: ["OutputText", "StewardJSON", "BlockingExecutor", "CSystem", "FileSystem", "StewardLog"]),
        .target(name: "FileSystem"),
        .target(name: "Systemd", dependencies: ["BlockingExecutor"]),
        .target(name: "Daemon", dependencies: ["OutputText", "StewardJSON", "StewardDatabase", "Config", "Control", "CSystem", "FileSystem", "Jobs", "StewardLog", "Migrations", "Postgres", "Scheduler", "Systemd", "SupabaseProject"]),

        // Many projects: targets, the rollout plan (stages, batches, what a failure stops), the bounded runner, the summary.
        .target(name: "Fleet", dependencies: ["Config", "OutputText", "Postgres", "StewardJSON"]),

        // The executable only wires the modules together.
        .executableTarget(
            name: "steward",
            dependencies: ["OutputText", "StewardJSON", "Advisor", "Alerts", "Apple", "BlockingExecutor", "CLI", "Config", "Control", "Daemon", "FileSystem", "Fleet", "Jobs", "StewardLog", "Postgres",
                           "Lint", "Migrations", "Scheduler", "SupabaseProject"] + jobModules.map { .target(name: $0.name) }
        ),

        // Fixtures shared by every test target: the real database, the built binary.
        .target(name: "TestSupport", dependencies: ["OutputText", "StewardJSON", "Postgres", "StewardLog", "HTTP", "Storage"], path: "Tests/TestSupport"),
        .testTarget(name: "PostgresTests", dependencies: ["Postgres", "TestSupport"]),
        .testTarget(name: "StewardDatabaseTests", dependencies: ["StewardDatabase", "Migrations", "Postgres", "TestSupport"], exclude: ["Fixtures"]),
        .testTarget(name: "MigrationsTests", dependencies: ["Migrations", "Postgres", "SQLParser", "LibCrypto", "SupabaseProject", "TestSupport"],
                    exclude: ["Fixtures"]),
        .testTarget(name: "LintTests", dependencies: ["Lint", "Migrations", "Postgres", "TestSupport"]),
        .testTarget(name: "ConfigTests", dependencies: ["OutputText", "StewardJSON", "Config", "CLI", "Daemon", "Jobs", "Migrations", "StewardLog", "Scheduler", "Control", "TestSupport", "steward",
                                                    "OrphanAvatars", "PruneHistory", "UsernameCheck"]),
        .testTarget(name: "SchedulerTests", dependencies: ["Scheduler"]),
        .testTarget(name: "JobsTests", dependencies: ["Jobs", "OutputText", "StewardLog", "TestSupport"]),
        .testTarget(name: "TimeZonesTests", dependencies: ["TimeZones", "TestSupport"]),
        .testTarget(name: "BlockingExecutorTests", dependencies: ["BlockingExecutor"]),
        .testTarget(name: "UsernamesTests", dependencies: ["Usernames", "TestSupport"]),
        .testTarget(name: "AdvisorTests", dependencies: ["Advisor", "Migrations", "Postgres", "SupabaseProject", "TestSupport"]),
        .testTarget(name: "OutputTextTests", dependencies: ["OutputText", "TestSupport"]),
        .testTarget(name: "HTTPTests", dependencies: ["HTTP", "Storage", "StewardLog", "TestSupport"]),
        .testTarget(name: "ControlTests", dependencies: ["Control"]),
        .testTarget(name: "DaemonTests", dependencies: ["Daemon"]),
        .testTarget(name: "FleetTests", dependencies: ["Config", "Fleet", "OutputText", "Postgres", "TestSupport"]),
        .testTarget(name: "StorageTests", dependencies: ["HTTP", "OutputText", "Storage", "TestSupport"]),
        // The binary end to end: commands, the daemon, the control socket, faults, logs and secrets across jobs.
        .testTarget(name: "StewardTests", dependencies: ["OutputText", "FileSystem", "Postgres", "TestSupport", "steward"]),
    ] + jobModules + jobTests
)
