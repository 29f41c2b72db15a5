// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "Steward",
    platforms: [.macOS(.v15)],
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
        .target(name: "Postgres", dependencies: ["CPostgres", "Logging"]),
        .target(name: "Crypto", dependencies: ["COpenSSL"]),
        .target(name: "Config", dependencies: ["Logging"]),
        .target(name: "HTTP", dependencies: ["CCurl"]),
        .target(name: "SQLParser", dependencies: ["CPgQuery"]),

        // Concerns of Steward itself.
        .target(name: "Logging"),
        .target(name: "Migrations", dependencies: ["Postgres", "Crypto", "Logging", "SQLParser"]),
        .target(name: "CLI", dependencies: ["Logging"]),
        .target(name: "Scheduler"),
        .target(name: "Advisor", dependencies: ["Postgres", "Logging"]),
        .target(name: "Storage", dependencies: ["HTTP", "Logging"]),
        .target(name: "Apple", dependencies: ["Crypto", "HTTP"]),
        .target(name: "Jobs", dependencies: ["Postgres", "Config", "Scheduler", "Logging", "Usernames", "Storage", "Apple", "Crypto", "HTTP", "Advisor"]),
        .target(name: "CSystem"),
        .target(name: "CUnicode"),
        // libcurl's headers (libcurl4-openssl-dev); the library itself is opened on first use.
        .target(name: "CCurl"),
        .target(name: "Usernames", dependencies: ["CUnicode"]),
        .target(name: "Control", dependencies: ["CSystem", "FileSystem", "Logging"]),
        .target(name: "FileSystem"),
        .target(name: "Systemd"),
        .target(name: "Daemon", dependencies: ["Config", "Control", "FileSystem", "Jobs", "Logging", "Migrations", "Postgres", "Scheduler", "Systemd"]),

        // The executable only wires the modules together.
        .executableTarget(
            name: "steward",
            dependencies: ["Advisor", "Apple", "CLI", "Config", "Control", "Daemon", "FileSystem", "Jobs", "Logging", "Postgres", "Migrations", "Scheduler"]
        ),

        // Fixtures shared by every test target: the real database, the built binary.
        .target(name: "TestSupport", dependencies: ["Postgres", "Logging", "HTTP", "Storage"], path: "Tests/TestSupport"),
        .testTarget(name: "PostgresTests", dependencies: ["Postgres", "TestSupport"]),
        .testTarget(name: "MigrationsTests", dependencies: ["Migrations", "Postgres", "SQLParser", "Crypto", "TestSupport"]),
        .testTarget(name: "ConfigTests", dependencies: ["Config", "CLI", "Jobs", "Logging", "Scheduler", "Control", "TestSupport"]),
        .testTarget(name: "SchedulerTests", dependencies: ["Scheduler"]),
        .testTarget(name: "UsernamesTests", dependencies: ["Usernames"]),
        .testTarget(name: "AdvisorTests", dependencies: ["Advisor", "Jobs", "Postgres", "TestSupport"]),
        .testTarget(name: "StewardTests", dependencies: ["FileSystem", "Postgres", "Storage", "TestSupport", "steward"]),
    ]
)
