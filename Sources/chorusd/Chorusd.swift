import ArgumentParser
import ChorusCore
import ChorusPostgres
import ChorusServer
import ChorusStore
import Dispatch
import Foundation
import Logging
import ServiceLifecycle
import UnixSignals

@main
struct Chorusd: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "chorusd",
        abstract: "Chorus: an IRC server for teams that share work.",
        subcommands: [Serve.self, AccountCommand.self, HashPassword.self, Check.self, Backup.self],
        defaultSubcommand: Serve.self)
}

extension DataOptions {
    /// Commands that read a data folder never make one: a mistyped `--data` is an error naming the
    /// path, not an empty database that looks like a server with nothing in it.
    func requireDatabase(_ settings: ServerConfig) throws {
        guard settings.store == nil, !FileManager.default.fileExists(atPath: settings.databasePath) else { return }
        throw ValidationError("There is no Chorus database at \(settings.databasePath): give --data with the server's data "
            + "folder (or --config with its config file). `chorusd account add` makes one in a new folder.")
    }
}

/// Options every subcommand that opens the database shares.
struct DataOptions: ParsableArguments {
    @Option(name: .long, help: "A config file of key = value lines (see deploy/chorus.conf).")
    var config: String?

    @Option(name: .long, help: "The data folder: database, certificate and key. Default ./chorus-data.")
    var data: String?

    @Option(name: .long, help: "Keep the team's data in PostgreSQL at this URL (postgres://user@host:5432/database) rather than the data folder's SQLite file.")
    var store: String?

    func load() throws -> ServerConfig {
        // What chorusd writes (database, its log, the TLS key) is for the server's user alone.
        umask(0o077)
        var settings = ServerConfig()
        if let config { try settings.load(file: config) }
        if let data { settings.dataDirectory = data }
        if let store { settings.store = store == "sqlite" ? nil : store }
        return settings
    }

    /// The store the settings name: PostgreSQL at `store`, or the checked SQLite file of the data
    /// folder (`DataFolder`). An error names the file or the server, and what to do.
    func openStore(_ settings: ServerConfig) throws -> any ChorusStorage {
        if let url = settings.store {
            return try PostgresStore(location: try PostgresLocation(url))
        }
        return try DataFolder(path: settings.dataDirectory).openStore(syncEveryCommit: settings.durability == .powerLoss)
    }

    /// The store as logs and messages name it: the PostgreSQL URL without its password, or the file.
    func storeName(_ settings: ServerConfig) throws -> String {
        try settings.store.map { try PostgresLocation($0).description } ?? settings.databasePath
    }
}

struct Serve: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Run the server (the default).")

    @OptionGroup var options: DataOptions

    @Option(help: "TLS listener as HOST:PORT, or off. Default 0.0.0.0:6697.")
    var tls: String?

    @Option(help: "Plaintext listener as HOST:PORT, or off. Default 127.0.0.1:6667.")
    var plain: String?

    @Option(help: "HTTPS listener (web client, IRC over WebSocket at /socket) as HOST:PORT, or off. Default 0.0.0.0:8443.")
    var web: String?

    @Option(help: "Plain-HTTP web listener for a TLS-ending proxy in front, as HOST:PORT (off unless given).")
    var webPlain: String?

    @Option(help: "The server's name, as clients see it.")
    var name: String?

    @Flag(help: "Turn off per-IP limits and flood control (for load tests on one machine).")
    var noLimits = false

    @Option(help: "Who joins a room an account made, until its managers choose: members (its members and those invited, the default) or open (anyone).")
    var rooms: String?

    @Option(help: "Log lines as text (the default) or json, one event a line.")
    var logFormat: ServerConfig.LogFormat?

    @Flag(help: "Log every connection and more.")
    var verbose = false

    /// The config file, with the command line's flags over it: at start and at each SIGHUP.
    func settings() throws -> ServerConfig {
        var settings = try options.load()
        if let tls { settings.tls = try ServerConfig.Listener.parse(tls) }
        if let plain { settings.plain = try ServerConfig.Listener.parse(plain) }
        if let web { settings.web = try ServerConfig.Listener.parse(web) }
        if let webPlain { settings.webPlain = try ServerConfig.Listener.parse(webPlain) }
        if let name { settings.serverName = name }
        if let logFormat { settings.logFormat = logFormat }
        if noLimits { settings.removeLimits() }
        if let rooms {
            guard ["open", "members"].contains(rooms) else { throw ValidationError("--rooms is open or members, not \(rooms)") }
            settings.roomsOpen = rooms == "open"
        }
        return settings
    }

    func run() async throws {
        let settings = try self.settings()
        let level: Logger.Level = verbose ? .debug : .info
        let json = settings.logFormat == .json
        LoggingSystem.bootstrap { label in
            var handler: any LogHandler = json ? JSONLogHandler(label: label) : StreamLogHandler.standardError(label: label)
            handler.logLevel = level
            return handler
        }
        let logger = Logger(label: "chorusd")
        let storeName = try options.storeName(settings)
        guard settings.tls != nil || settings.plain != nil else {
            throw ValidationError("Both IRC listeners are off: give --tls or --plain an address")
        }
        // Each client is a file descriptor: allow as many as the system lets this process have.
        var files = rlimit()
        getrlimit(Int32(RLIMIT_NOFILE.rawValue), &files)
        files.rlim_cur = files.rlim_max
        setrlimit(Int32(RLIMIT_NOFILE.rawValue), &files)

        // A start that fails (a port taken, say) leaves no data folder it made behind it.
        let folderWasThere = settings.store != nil || FileManager.default.fileExists(atPath: settings.dataDirectory)
        func undoFolder() { if !folderWasThere { try? FileManager.default.removeItem(atPath: settings.dataDirectory) } }
        let store: any ChorusStorage
        do { store = try options.openStore(settings) } catch { undoFolder(); throw error }
        if let mib = settings.maxDatabaseMiB {
            // PostgreSQL's size is its operator's to limit (quotas, tablespaces), not ours.
            if let file = store as? SQLiteStore {
                try file.limitSize(toBytes: Int64(mib) * 1024 * 1024)
            } else {
                logger.warning("max-database-size applies to the SQLite store only: PostgreSQL's size is not capped here")
            }
        }
        // PostgreSQL is shared by every node on it: the server is given its log and presence.
        let cluster = (store as? PostgresStore).map { ClusterLink(log: $0, presence: $0) }
        let server = IRCServer(config: settings, store: store, cluster: cluster, logger: logger)
        do {
            try server.start()
        } catch {
            server.shutdown()
            store.close()
            undoFolder()
            throw error
        }
        warnIfOthersCanRead([settings.databasePath, settings.databasePath + "-wal", settings.resolvedKeyPath], logger: logger)
        let running: Logger.Metadata = [
            "tls": "\(server.tlsAddress.map { "\($0)" } ?? "off")",
            "plain": "\(server.plainAddress.map { "\($0)" } ?? "off")",
            "web": "\(server.webAddress.map { "\($0)" } ?? "off")",
            "data": "\(settings.dataDirectory)",
            "store": "\(storeName)",
        ]

        // Stop cleanly on SIGINT/SIGTERM: tell everyone, write what is pending, close the database.
        let service = ChorusService(server: server, logger: logger, running: running) {
            // SIGHUP: the config file and the certificate again; a file that cannot be read changes nothing.
            do {
                server.reload(try self.settings())
            } catch {
                logger.error("configuration not reloaded: the one in use stays", metadata: ["error": "\(error)"])
            }
        }
        let group = ServiceGroup(configuration: .init(services: [.init(service: service)],
                                                      gracefulShutdownSignals: [.sigterm, .sigint], logger: logger))
        try await group.run()
        store.close()
    }
}

/// The running server as swift-service-lifecycle sees it: started before the group runs (a port
/// taken is an error at start, before anything is said to be running), reloaded on SIGHUP, and
/// shut down when the group's graceful shutdown begins (SIGTERM, SIGINT).
struct ChorusService: Service {
    let server: IRCServer
    let logger: Logger
    /// What "Chorus is running" says (the addresses, the data folder, the store).
    let running: Logger.Metadata
    let reload: @Sendable () -> Void

    func run() async throws {
        // Said once SIGHUP is trapped here and SIGTERM and SIGINT by the group (before it runs its
        // services): a SIGHUP that came between the start and the trap ended the process.
        let reloads = await UnixSignalsSequence(trapping: .sighup)
        logger.info("Chorus is running", metadata: running)
        for await _ in reloads.cancelOnGracefulShutdown() {
            reload()
        }
        logger.info("shutting down")
        // Shutting down waits for the writer's last batch and the clients' goodbyes: off the
        // concurrency pool's threads.
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            DispatchQueue.global().async {
                server.shutdown()
                done.resume()
            }
        }
    }
}

struct Check: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Check the data folder as a start would: the database's integrity, the certificate and the key.")

    @OptionGroup var options: DataOptions

    func run() throws {
        let settings = try options.load()
        var failed = false
        do {
            try options.requireDatabase(settings)
            let store = try options.openStore(settings)
            try store.probe()
            store.close()
            print("database \(try options.storeName(settings)): ok")
        } catch {
            print("database: \(error)")
            failed = true
        }
        do {
            if settings.certificatePath == nil, settings.keyPath == nil,
               !FileManager.default.fileExists(atPath: settings.resolvedCertificatePath) {
                print("certificate: none yet; chorusd serve makes a self-signed one at \(settings.resolvedCertificatePath)")
            } else {
                _ = try Certificates.serverContext(certPath: settings.resolvedCertificatePath, keyPath: settings.resolvedKeyPath)
                print("certificate \(settings.resolvedCertificatePath) and key \(settings.resolvedKeyPath): ok")
            }
        } catch {
            print("\(error)")
            failed = true
        }
        if failed { throw ExitCode.failure }
    }
}

struct Backup: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Copy the database to FILE, consistently, while the server runs (README, \"Backups\").")

    @OptionGroup var options: DataOptions

    @Argument(help: "The copy to make; it must not exist yet.")
    var file: String

    func run() throws {
        let settings = try options.load()
        guard settings.store == nil else {
            throw ConfigError("The team's data is in PostgreSQL: back it up with PostgreSQL's own tools "
                + "(pg_dump, or a base backup with streaming replication), as README's \"PostgreSQL\" says.")
        }
        try options.requireDatabase(settings)
        let store = try DataFolder(path: settings.dataDirectory).openStore()
        defer { store.close() }
        try store.backup(to: file)
        print("copied \(settings.databasePath) to \(file)")
    }
}

/// Files made before Chorus created them private keep their mode: say so rather than change what
/// an operator may have chosen.
func warnIfOthersCanRead(_ paths: [String], logger: Logger) {
    for path in paths {
        guard let mode = (try? FileManager.default.attributesOfItem(atPath: path))?[.posixPermissions] as? Int,
              mode & 0o077 != 0 else { continue }
        logger.warning("other users of this machine can read \(path) (mode \(String(mode, radix: 8))): chmod 600 it")
    }
}


struct HashPassword: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "hash-password", abstract: "Print a scrypt hash for an `oper = NAME HASH` line of the config file.")
    @Option(help: "Password (read from standard input when left out).") var password: String?

    func run() throws {
        print(try PasswordHasher().hash(try AccountCommand.readPassword(password)))
    }
}
