// swift-tools-version:6.0
import PackageDescription

/// One module per job, each on top of the job framework (`Jobs`); the executable depends on all of them and lists
/// the job types once, in `Sources/steward/StewardJobs.swift`.
let jobModules: [Target] = [
    .target(name: "PruneHistory", dependencies: ["Config", "Jobs", "Postgres"]),
    .target(name: "UsernameCheck", dependencies: ["Config", "Jobs", "OutputText", "Postgres", "Usernames"], exclude: ["username-findings.sql"]),
    .target(name: "OrphanAvatars", dependencies: ["Config", "HTTP", "Jobs", "OutputText", "StewardLog", "Postgres", "Storage"], exclude: ["deleted-objects.sql", "deleted-objects-settle-after.sql"]),
    .target(name: "AppleSecret", dependencies: ["OutputText", "Alerts", "Apple", "Config", "LibCrypto", "HTTP", "Jobs", "StewardLog", "Postgres"],
            exclude: ["apple-secrets.sql"]),
    .target(name: "AdvisorJob", dependencies: ["Advisor", "Alerts", "Config", "Jobs", "StewardLog", "Postgres"]),
    .target(name: "LegacyImport", dependencies: ["Config", "Jobs", "StewardLog", "Postgres"]),
]

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
        .target(name: "Postgres", dependencies: ["CPostgres", "BlockingExecutor", "StewardLog", "TimeZones"]),
        .target(name: "LibCrypto", dependencies: ["COpenSSL"]),
        .target(name: "Config", dependencies: ["OutputText", "StewardLog"]),
        .target(name: "HTTP", dependencies: ["CCurl", "BlockingExecutor"]),
        .target(name: "SQLParser", dependencies: ["CPgQuery"]),

        // The threads every blocking C call runs on, off the cooperative pool and cancellable.
        .target(name: "BlockingExecutor"),

        // Concerns of Steward itself.
        .target(name: "OutputText"),
        // Log lines: levels, sinks, the secret redactor.
        .target(name: "StewardLog", dependencies: ["FileSystem", "OutputText"]),
        .target(name: "Migrations", dependencies: ["OutputText", "AdvisoryLocks", "Postgres", "LibCrypto", "StewardLog", "SQLParser", "StewardSchema"],
                exclude: ["steward-schema.sql", "supabase-cli-method.sql", "schema-record.sql"]),
        // What each pending statement locks, on which table and for how long (scan, rewrite), judged against the live
        // catalog: `steward lint`, and the gate `migrate` runs before applying.
        .target(name: "Lint", dependencies: ["OutputText", "Migrations", "Postgres", "SQLParser"]),
        // Steward's own tables: the owners' .sql files, embedded at build time in version order (versions.txt).
        .target(name: "StewardSchema", exclude: ["versions.txt"], plugins: ["EmbedSchema"]),
        .plugin(name: "EmbedSchema", capability: .buildTool(), dependencies: ["EmbedSchemaTool"]),
        .executableTarget(name: "EmbedSchemaTool"),
        // What Steward knows of the Supabase app's schema (advice, enforcement), kept out of the generic engine.
        .target(name: "SupabaseProject", dependencies: ["Advisor", "Migrations", "Postgres"]),
        .target(name: "CLI"),
        .target(name: "Scheduler", dependencies: ["OutputText", "TimeZones"]),
        // Time zones from the system's tzdata files, and the one owner of calendar arithmetic.
        .target(name: "TimeZones"),
        .target(name: "Advisor", dependencies: ["OutputText", "Postgres", "StewardLog"], exclude: ["advisor-findings.sql"]),
        .target(name: "Storage", dependencies: ["OutputText", "BlockingExecutor", "HTTP", "StewardLog"]),
        .target(name: "Apple", dependencies: ["OutputText", "BlockingExecutor", "LibCrypto", "HTTP"]),
        // Every advisory lock key Steward takes.
        .target(name: "AdvisoryLocks"),
        .target(name: "Alerts", dependencies: ["OutputText", "HTTP", "StewardLog", "Postgres"], exclude: ["alerts.sql"]),
        // The job framework; each job is a module of its own on top of it (`jobModules`, above).
        .target(name: "Jobs", dependencies: ["OutputText", "AdvisoryLocks", "Config", "StewardLog", "Postgres", "Scheduler"], exclude: ["job-runs.sql"]),
        .target(name: "CSystem"),
        .target(name: "CUnicode"),
        // libcurl's headers (libcurl4-openssl-dev); the library itself is opened on first use.
        .target(name: "CCurl"),
        .target(name: "Usernames", dependencies: ["CUnicode"]),
        .target(name: "Control", dependencies: ["OutputText", "CSystem", "FileSystem", "StewardLog"]),
        .target(name: "FileSystem"),
        .target(name: "Systemd"),
        .target(name: "Daemon", dependencies: ["OutputText", "AdvisoryLocks", "Config", "Control", "CSystem", "FileSystem", "Jobs", "StewardLog", "Migrations", "Postgres", "Scheduler", "Systemd", "SupabaseProject"], exclude: ["leader.sql"]),

        // Many projects: targets, the rollout plan (stages, batches, what a failure stops), the bounded runner, the summary.
        .target(name: "Fleet", dependencies: ["Config", "OutputText", "Postgres"]),

        // The executable only wires the modules together.
        .executableTarget(
            name: "steward",
            dependencies: ["OutputText", "Advisor", "Alerts", "Apple", "BlockingExecutor", "CLI", "Config", "Control", "Daemon", "FileSystem", "Fleet", "Jobs", "StewardLog", "Postgres",
                           "Lint", "Migrations", "Scheduler", "SupabaseProject"] + jobModules.map { .target(name: $0.name) }
        ),

        // Fixtures shared by every test target: the real database, the built binary.
        .target(name: "TestSupport", dependencies: ["OutputText", "Postgres", "StewardLog", "HTTP", "Storage"], path: "Tests/TestSupport"),
        .testTarget(name: "PostgresTests", dependencies: ["Postgres", "TestSupport"]),
        .testTarget(name: "MigrationsTests", dependencies: ["Migrations", "Postgres", "SQLParser", "LibCrypto", "StewardSchema", "SupabaseProject", "TestSupport"],
                    exclude: ["Fixtures"]),
        .testTarget(name: "LintTests", dependencies: ["Lint", "Migrations", "Postgres", "TestSupport"]),
        .testTarget(name: "ConfigTests", dependencies: ["OutputText", "Config", "CLI", "Jobs", "StewardLog", "Scheduler", "Control", "TestSupport", "steward",
                                                    "OrphanAvatars", "PruneHistory", "UsernameCheck"]),
        .testTarget(name: "SchedulerTests", dependencies: ["Scheduler"]),
        .testTarget(name: "JobsTests", dependencies: ["Jobs", "OutputText", "StewardLog", "TestSupport"]),
        .testTarget(name: "TimeZonesTests", dependencies: ["TimeZones", "TestSupport"]),
        .testTarget(name: "BlockingExecutorTests", dependencies: ["BlockingExecutor"]),
        .testTarget(name: "UsernamesTests", dependencies: ["Usernames", "TestSupport"]),
        .testTarget(name: "AdvisorTests", dependencies: ["Advisor", "AdvisorJob", "Jobs", "LegacyImport", "Migrations", "Postgres", "SupabaseProject", "TestSupport"]),
        .testTarget(name: "FleetTests", dependencies: ["Config", "Fleet", "OutputText", "Postgres", "TestSupport"]),
        .testTarget(name: "StewardTests", dependencies: ["OutputText", "FileSystem", "Postgres", "Storage", "TestSupport", "steward"]),
    ] + jobModules
)
