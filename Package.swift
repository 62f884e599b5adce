// swift-tools-version:6.0
import PackageDescription

// Module layout and the direction of dependencies are described in README.md ("Architecture").
// ChorusIRC (wire) and ChorusCore (domain) know nothing of each other; ChorusServer joins them.
let package = Package(
    name: "Chorus",
    platforms: [.macOS(.v13)],
    products: [
        .executable(name: "chorusd", targets: ["chorusd"]),
        .executable(name: "chorus-bench", targets: ["chorus-bench"]),
        .executable(name: "chorus-store-bench", targets: ["chorus-store-bench"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-nio-ssl.git", from: "2.37.6"),
        .package(url: "https://github.com/apple/swift-certificates.git", from: "1.21.1"),
        .package(url: "https://github.com/apple/swift-crypto.git", from: "4.5.2"),
        .package(url: "https://github.com/apple/swift-asn1.git", from: "1.7.4"),
        .package(url: "https://github.com/groue/GRDB.swift.git", from: "7.10.0"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-metrics.git", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus.git", from: "2.4.1"),
        .package(url: "https://github.com/vapor/postgres-nio.git", from: "1.33.2"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/async-http-client.git", from: "1.37.0"),
        .package(url: "https://github.com/vapor/multipart-kit.git", from: "4.7.1"),
        .package(url: "https://github.com/adam-fowler/compress-nio.git", from: "1.5.0"),
        .package(url: "https://github.com/vapor/jwt-kit.git", from: "5.7.1"),
    ],
    targets: [
        // The wire: IRC message model, parser, serializer, numerics, casemapping. No NIO, no Foundation.
        .target(name: "ChorusIRC"),
        // The domain: accounts, rooms, roles, history records, rules, and the Store protocol.
        .target(
            name: "ChorusCore",
            dependencies: [
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "CryptoExtras", package: "swift-crypto"),
            ]
        ),
        // The store's queries written once, over a small connection protocol and a dialect.
        .target(name: "ChorusSQL", dependencies: ["ChorusCore"]),
        // SQLite through GRDB.
        .target(
            name: "ChorusStore",
            dependencies: [
                "ChorusCore", "ChorusSQL", .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "GRDBSQLite", package: "GRDB.swift"),
            ]
        ),
        // PostgreSQL through postgres-nio: the same store protocols, for several nodes on one database.
        .target(
            name: "ChorusPostgres",
            dependencies: [
                "ChorusCore", "ChorusSQL",
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // The one door to the team's state: commands, group commit, the event sinks, what comes due.
        .target(
            name: "ChorusWorkspace",
            dependencies: ["ChorusCore", .product(name: "Logging", package: "swift-log")]
        ),
        // The command language: `!verb args` → a command the Workspace runs → replies and events with tags.
        .target(name: "ChorusBot", dependencies: ["ChorusCore", "ChorusWorkspace"]),
        // SwiftNIO: listeners, sessions, channel registry, fan-out, history playback.
        .target(
            name: "ChorusServer",
            dependencies: [
                "ChorusIRC", "ChorusCore", "ChorusSQL", "ChorusWorkspace", "ChorusBot",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOWebSocket", package: "swift-nio"),
                .product(name: "NIOTLS", package: "swift-nio"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "MultipartKit", package: "multipart-kit"),
                .product(name: "CompressNIO", package: "compress-nio"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "JWTKit", package: "jwt-kit"),
                .product(name: "Logging", package: "swift-log"),
            ],
            // The web client, compiled into the binary: nothing to install beside it.
            resources: [
                .embedInCode("Web/Client/index.html"),
                .embedInCode("Web/Client/irc.js"),
                .embedInCode("Web/Client/chat.js"),
                .embedInCode("Web/Client/jobs.js"),
                .embedInCode("Web/Client/team.js"),
                .embedInCode("Web/Client/app.js"),
                .embedInCode("Web/Client/app.css"),
                .embedInCode("Web/Client/icon.svg"),
                .embedInCode("Web/Client/sw.js"),
                .embedInCode("Web/Client/manifest.webmanifest"),
                .embedInCode("Web/API/openapi.json"),
            ]
        ),
        .executableTarget(
            name: "chorusd",
            dependencies: [
                "ChorusServer", "ChorusStore", "ChorusPostgres", "ChorusCore",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
            ]
        ),
        // Boards on large tables, in process (`!request add`, `!report`): run on demand (see BENCHMARKS.md).
        .executableTarget(
            name: "chorus-store-bench",
            dependencies: ["ChorusCore", "ChorusStore", "ChorusWorkspace", "ChorusBot"]
        ),
        // The load generator: run on demand, never in `swift test` (see BENCHMARKS.md).
        .executableTarget(
            name: "chorus-bench",
            dependencies: [
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOWebSocket", package: "swift-nio"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        // The store a test runs on: SQLite, or PostgreSQL when CHORUS_TEST_STORE=postgres.
        .target(
            name: "ChorusTestSupport",
            dependencies: ["ChorusCore", "ChorusStore", "ChorusPostgres", .product(name: "GRDB", package: "GRDB.swift")],
            path: "Tests/ChorusTestSupport"
        ),
        .testTarget(name: "ChorusIRCTests", dependencies: ["ChorusIRC"]),
        .testTarget(
            name: "ChorusStoreTests",
            dependencies: [
                "ChorusStore", "ChorusCore", "ChorusSQL", "ChorusPostgres", "ChorusTestSupport",
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .testTarget(name: "ChorusCoreTests", dependencies: ["ChorusCore", "ChorusStore", "ChorusTestSupport"]),
        .testTarget(name: "ChorusWorkspaceTests", dependencies: ["ChorusWorkspace", "ChorusCore", "ChorusStore", "ChorusTestSupport"]),
        .testTarget(name: "ChorusBotTests", dependencies: ["ChorusBot", "ChorusWorkspace", "ChorusCore", "ChorusStore", "ChorusTestSupport"]),
        .testTarget(
            name: "ChorusServerTests",
            dependencies: [
                "ChorusServer", "ChorusStore", "ChorusSQL", "ChorusCore", "ChorusIRC", "ChorusWorkspace", "ChorusBot", "ChorusTestSupport",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOWebSocket", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
    ],
    swiftLanguageModes: [.v5]
)
