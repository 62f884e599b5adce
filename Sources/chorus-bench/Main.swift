import ArgumentParser
import Foundation

@main
struct ChorusBench: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "chorus-bench",
        abstract: "Measure an IRC server on this machine: memory, CPU and latency per unit of work.",
        discussion: """
        Targets 127.0.0.1 only. Give the server's PID (--pid) so its memory and CPU can be read from
        /proc, or let the tool start chorusd itself (--spawn PATH, on a fresh data folder with
        --no-limits). Every wait is bounded by --timeout.
        Scenarios: idle, fanout, churn, commands (Chorus only: needs accounts and the bot), logins (Chorus:
        a real user's SASL login while guessers from 64 loopback addresses try passwords), stalled (clients that stop
        reading while their room talks: the server's memory until it cuts them off; --clients of them), api (Chorus:
        --bots scripts post --messages commands to the JSON API on keep-alive connections, then one catches up on its feed;
        needs --spawn), reconnect (Chorus: --clients token logins at once, as after a restart, spread over --accounts
        accounts, while --guessers connections try passwords; needs --spawn).
        """)

    @Argument(help: "idle | fanout | churn | commands | logins | stalled | api | reconnect")
    var scenario: String

    @Option(help: "The server's plaintext (or, with --tls, TLS) port.") var port = 6667
    @Option(help: "The server's process id.") var pid: Int32?
    @Option(help: "Start this chorusd binary for the run and stop it after.") var spawn: String?
    @Option(help: "With --spawn: keep chorusd's data in PostgreSQL at this URL (a new schema each run, shared by its --nodes) rather than SQLite.")
    var store: String?
    @Option(help: "With --spawn and --store: run this many chorusd processes on the one database, the clients spread over them.")
    var nodes = 1
    @Option(help: "With --spawn: config lines for chorusd (`durability = power-loss`), one argument each.")
    var serverSetting: [String] = []
    @Flag(help: "Connect with TLS.") var tls = false
    @Flag(help: "Connect with IRC over WebSocket (TLS, /socket, text.ircv3.net), as a browser does; --port is the web port.")
    var websocket = false
    @Flag(help: "Connect with IRC over WebSocket without TLS, as a TLS-ending proxy does, to chorusd's web-plain listener; --port is that listener's.")
    var plainWebsocket = false
    @Option(help: "idle: connections; reconnect: token logins at once.") var clients = 1000
    @Option(help: "reconnect: accounts the clients log in as (each made with a token).") var accounts = 20
    @Option(help: "idle: seconds the connections stay idle before the server's memory is read.") var settle = 1.0
    @Option(help: "fanout: members of the room.") var members = 100
    @Option(help: "fanout: how many members send.") var senders = 4
    @Option(help: "fanout: messages; commands: commands.") var messages = 20000
    @Option(help: "fanout: deliveries per second (light load); commands: commands per second. Omit to saturate.") var rate: Double?
    @Option(help: "Messages or commands in flight when saturating.") var window = 64
    @Option(help: "churn: cycles.") var cycles = 2000
    @Option(help: "churn: cycles in flight.") var concurrency = 20
    @Option(help: "commands, api: bots (scripts) sending commands.") var bots = 10
    @Option(help: "logins, reconnect: guessing connections (spread over 64 loopback addresses).") var guessers = 2000
    @Option(help: "logins: the guessers' connections each come from the next of this many addresses (127.1.0.0 and up) rather than 64 fixed ones.")
    var rotatingAddresses: Int?
    @Option(help: "logins: the real user's logins measured.") var logins = 10
    @Option(help: "stalled: the server's send-queue limit, for the report (chorusd's default).") var sendq = 256 * 1024
    @Option(help: "Give up after this many seconds.") var timeout = 300.0

    func run() throws {
        raiseFileLimit()
        var spawned: [Spawn] = []
        var serverPIDs = pid.map { [$0] } ?? []
        var benchPorts = [port]
        guard nodes == 1 || (spawn != nil && store != nil) else { throw ValidationError("--nodes needs --spawn and --store") }
        defer { spawned.forEach { $0.stop() } }
        if let spawn {
            // One schema for all the nodes of the run, new each run.
            let url = store.map { $0 + ($0.contains("?") ? "&" : "?") + "schema=bench_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "") }
            for _ in 0..<max(1, nodes) {
                // Clients that stop reading meet the send-queue limit chorusd runs with, not --no-limits' 64 MiB.
                spawned.append(try Spawn(spawn, keepingSendQueue: scenario == "stalled", store: url, settings: serverSetting))
            }
            serverPIDs = spawned.map(\.process.processIdentifier)
            benchPorts = spawned.map { plainWebsocket ? $0.webPlainPort : websocket ? $0.webPort : tls ? $0.tlsPort : $0.plainPort }
        }
        guard !serverPIDs.isEmpty else { throw ValidationError("Give --pid of the server, or --spawn PATH-TO-CHORUSD") }
        guard !(plainWebsocket && (websocket || tls)) else { throw ValidationError("--plain-websocket goes without --websocket and --tls") }
        let bench = try Bench(ports: benchPorts, tls: tls || websocket, webSocket: websocket || plainWebsocket, pids: serverPIDs, timeout: timeout)
        let figures: Figures
        switch scenario {
        case "idle":
            figures = try IdleScenario().run(bench, clients: clients, settle: settle)
        case "fanout":
            let perMessage = Double(max(1, members - 1))
            // With a fixed rate the timer alone sends; a window would send more on every completion.
            figures = try FanoutScenario(members: members, senders: senders, window: rate == nil ? window : 0)
                .run(bench, messages: messages, rate: rate.map { $0 / perMessage })
        case "churn":
            figures = try ChurnScenario().run(bench, cycles: cycles, concurrency: concurrency)
        case "commands":
            figures = try CommandsScenario(bots: bots).run(bench, commands: messages, rate: rate, window: window)
        case "logins":
            figures = try LoginsScenario(guessers: guessers, rotating: rotatingAddresses).run(bench, logins: logins)
        case "stalled":
            figures = try StalledScenario(stalled: clients).run(bench, sendQueueBytes: sendq)
        case "api":
            guard let spawn, let first = spawned.first else { throw ValidationError("api needs --spawn (it makes the scripts' accounts and tokens)") }
            figures = try APIScenario(bots: bots, chorusd: spawn, data: first.data.path, store: first.store, port: first.webPlainPort)
                .run(bench, commands: messages)
        case "reconnect":
            guard let spawn, let first = spawned.first else { throw ValidationError("reconnect needs --spawn (it makes the accounts and tokens)") }
            figures = try ReconnectScenario(clients: clients, accounts: accounts, guessers: guessers)
                .run(bench, with: Operator(chorusd: spawn, data: first.data.path, store: first.store))
        default:
            throw ValidationError("Unknown scenario \(scenario): use idle, fanout, churn, commands, logins, stalled, api or reconnect")
        }
        let transport = plainWebsocket ? " (WebSocket, no TLS)" : websocket ? " (WebSocket)" : tls ? " (TLS)" : ""
        figures.print(title: "\(scenario)\(transport) against pid \(serverPIDs.map(String.init).joined(separator: ", "))")
    }

    func raiseFileLimit() {
        var limit = rlimit()
        getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
        limit.rlim_cur = limit.rlim_max
        setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
    }
}

/// chorusd on free loopback ports with a fresh data folder and no limits, for one run: `stop()`
/// ends it and removes the folder, so runs neither leave data behind nor find an earlier run's.
struct Spawn {
    let process: Process
    let plainPort: Int
    var tlsPort: Int { plainPort + 1 }
    var webPort: Int { plainPort + 2 }
    var webPlainPort: Int { plainPort + 3 }
    let data: URL
    /// The PostgreSQL URL (with the run's schema) the process keeps its data at, if not SQLite.
    let store: String?

    init(_ path: String, keepingSendQueue: Bool = false, store: String? = nil, settings: [String] = []) throws {
        self.store = store
        // Below Linux's ephemeral range (32768 and up): the generator's own connections take
        // ports there, and a server that cannot bind exits at once.
        plainPort = 4 * Int.random(in: 5000..<8000)
        data = FileManager.default.temporaryDirectory.appendingPathComponent("chorus-bench-\(UUID().uuidString)")
        do {
            process = try Self.start(path, plain: plainPort, data: data.path, store: store,
                                     keepingSendQueue: keepingSendQueue, settings: settings)
        } catch {
            try? FileManager.default.removeItem(at: data)
            throw error
        }
    }

    func stop() {
        process.terminate()
        process.waitUntilExit()
        try? FileManager.default.removeItem(at: data)
    }

    /// Whether `chorusd serve` at `path` knows `--rooms`.
    private static func takesRoomsOption(_ path: String) -> Bool {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: path)
        p.arguments = ["serve", "--help"]
        let out = Pipe()
        p.standardOutput = out
        p.standardError = FileHandle.nullDevice
        guard (try? p.run()) != nil else { return false }
        let help = out.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        return String(decoding: help, as: UTF8.self).contains("--rooms")
    }

    /// Listens on four ports from `plain`: plaintext, TLS, web and web-plain.
    private static func start(_ path: String, plain: Int, data: String, store: String?, keepingSendQueue: Bool,
                              settings: [String]) throws -> Process {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: path)
        p.arguments = ["serve", "--data", data, "--plain", "127.0.0.1:\(plain)", "--tls", "127.0.0.1:\(plain + 1)",
                       "--web", "127.0.0.1:\(plain + 2)", "--web-plain", "127.0.0.1:\(plain + 3)"]
        if let store { p.arguments! += ["--store", store] }
        // The bots of a scenario share rooms one of them made: open them to all, where the build
        // under test has the setting (builds before it had only open rooms).
        if takesRoomsOption(path) { p.arguments! += ["--rooms", "open"] }
        // No per-address limit and no flood control, as --no-limits, but the default send queue.
        let lines = (keepingSendQueue ? ["max-connections-per-ip = 0", "flood-burst = 0"] : []) + settings
        if !lines.isEmpty {
            try FileManager.default.createDirectory(atPath: data, withIntermediateDirectories: true)
            let config = data + "/bench.conf"
            try lines.map { $0 + "\n" }.joined().write(toFile: config, atomically: true, encoding: .utf8)
            p.arguments! += ["--config", config, "--data", data]
        }
        if !keepingSendQueue { p.arguments!.append("--no-limits") }
        p.standardOutput = FileHandle.nullDevice
        p.standardError = FileHandle.nullDevice
        // Kept where asked, to look into a run that went wrong: one file a node, by its first port.
        if let folder = ProcessInfo.processInfo.environment["CHORUS_BENCH_SERVER_LOGS"] {
            let file = "\(folder)/chorusd-\(plain).log"
            FileManager.default.createFile(atPath: file, contents: nil)
            p.standardError = FileHandle(forWritingAtPath: file) ?? FileHandle.nullDevice
        }
        try p.run()
        // Wait (bounded) for the listener.
        for _ in 0..<200 {
            if let fd = loopbackSocket(port: plain) {
                close(fd)
                return p
            }
            guard p.isRunning else {
                throw BenchError("chorusd exited (status \(p.terminationStatus)) before listening on 127.0.0.1:\(plain)")
            }
            usleep(50_000)
        }
        p.terminate()
        throw BenchError("chorusd did not start listening on 127.0.0.1:\(plain) within 10 s")
    }
}
