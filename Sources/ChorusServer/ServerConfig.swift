import ChorusCore
import Foundation
import NIOCore

/// Everything an operator can set. Defaults are what `chorusd` runs with when given nothing.
public struct ServerConfig: Sendable {
    public struct Listener: Sendable, Equatable {
        public var host: String
        public var port: Int
        public init(host: String, port: Int) {
            self.host = host
            self.port = port
        }
    }

    public struct Operator: Sendable, Equatable {
        public var name: String
        /// A scrypt hash made with `chorusd hash-password`.
        public var passwordHash: String
        public init(name: String, passwordHash: String) {
            self.name = name
            self.passwordHash = passwordHash
        }
    }

    public var serverName = "chorus.local"
    public var network = "Chorus"
    public var dataDirectory = "./chorus-data"
    /// Where the team's data is kept: nil for the SQLite file in the data folder, or a PostgreSQL
    /// URL (`postgres://user@host:5432/database`).
    public var store: String?
    /// nil: that listener is off.
    public var tls: Listener? = Listener(host: "0.0.0.0", port: 6697)
    public var plain: Listener? = Listener(host: "127.0.0.1", port: 6667)
    /// HTTPS: the web client at `/`, IRC over WebSocket at `/socket`, report pictures, health.
    /// Same certificate as the TLS listener.
    public var web: Listener? = Listener(host: "0.0.0.0", port: 8443)
    /// The same without TLS, for a reverse proxy that ends TLS in front of it (nginx, Caddy);
    /// off unless given, and meant for loopback.
    public var webPlain: Listener?
    /// Pages of other origins (`https://chat.example.org`) whose scripts may open `/socket`; a page
    /// of the server's own origin always may. `*` lets any page.
    public var webOrigins: [String] = []
    /// Balancers (HAProxy with `send-proxy` or `send-proxy-v2`) whose connections (IRC and web)
    /// begin with a PROXY protocol header naming the client's address; the header is required from
    /// them, and read from no one else.
    public var proxyFrom: Set<String> = []
    /// HTTP reverse proxies in front of the web listeners (nginx, Caddy, HAProxy in HTTP mode) whose
    /// `Forwarded` or `X-Forwarded-For` header names the client; read from no one else.
    public var webProxyFrom: Set<String> = []
    /// The address people reach the web side at, for links in replies (`https://chat.example.org`).
    /// nil: `https://<name>:<web port>`.
    public var webURL: String?
    /// A budget for the database file, in MiB; past it, writes fail as on a full disk (lines are
    /// still delivered, and their senders told they are not kept). nil: no budget.
    public var maxDatabaseMiB: Int?
    /// What a commit survives on SQLite (`durability`): a crash of the process (the default), or
    /// a power cut too, at the price of a sync of the disk per commit.
    public var durability = Durability.crash

    public enum Durability: String, Sendable {
        case crash
        case powerLoss = "power-loss"
    }

    /// How log lines are written: text for people, json for log collectors.
    public var logFormat = LogFormat.text

    public enum LogFormat: String, Sendable {
        case text, json
    }

    /// Who may read `/metrics` on the web port.
    public var metrics = MetricsAccess.loopback

    public enum MetricsAccess: String, Sendable {
        case loopback, any, off
    }
    /// nil: `<data>/cert.pem` and `<data>/key.pem`, made self-signed on first start.
    public var certificatePath: String?
    public var keyPath: String?
    /// The nick of the built-in bot that answers `!commands` in private; no person may take it.
    public var serviceNick = "Chorus"
    /// The time zone for reading and showing due times (`tomorrow 17:00`).
    public var timeZone = TimeZone.current
    public var motd = "Welcome to Chorus: a chat server for teams that share work.\nType /join #room to start."
    /// Who may join a room an account made, until its managers choose (`!room set open`): its
    /// members and those invited (`false`, a team's rooms), or anyone (`true`: a public network,
    /// a conformance run). Rooms only guests are in are open either way, as on any IRC server.
    public var roomsOpen = false
    /// Accounts one address may make (REGISTER) in an hour; its network (an IPv4 /24, an IPv6 /64)
    /// four times as many. 0: no limit.
    public var registrationsPerHour = 5
    /// Whether webhooks may reach loopback, private and link-local addresses, and plain `http://`
    /// (a receiver on the team's own network); off, they reach public HTTPS addresses only.
    public var webhooksToPrivate = false
    /// Whether push messages may go to push services on loopback, private and link-local
    /// addresses and over plain `http://` (a UnifiedPush server such as ntfy on the team's own
    /// network); off, to public HTTPS push services only (those of Chrome, Firefox and Safari).
    public var pushToPrivate = false
    /// How a push service reaches this server's operator (VAPID's `sub`: a `mailto:` or `https:`
    /// URL); `https://<server name>` unless set.
    public var pushContact: String?
    /// The wait before a failed webhook delivery is tried again, doubling each time up to an hour.
    public var webhookRetry: Double = 5
    /// Requests a token may make to the JSON API in a second, saving up twice as many. 0: no limit.
    public var apiRequestsPerSecond = 200
    /// Lines replayed on JOIN to clients without `draft/chathistory`.
    public var historyReplayLines = 20
    /// The largest page a CHATHISTORY request returns.
    public var historyPageLimit = 100
    /// How often the person whose turn it is hears again while a chore is overdue.
    public var reminderInterval: TimeAmount = 4 * 3600
    public var pingInterval: TimeAmount = 90
    public var pingTimeout: TimeAmount = 60
    public var registrationTimeout: TimeAmount = 60
    /// Connections one IP address may hold at once (0: no limit).
    public var maxConnectionsPerIP = 32
    /// Flood control: a client may send `floodBurst` lines at once, then `floodRate` per second;
    /// past `floodQueue` waiting lines it is disconnected.
    public var floodBurst = 10
    public var floodRate = 4.0
    public var floodQueue = 100
    /// Bot commands one client may have waiting for the database at once; more lets a script's
    /// commands share a commit. 1: each command waits for the answer to the one before.
    public var commandPipeline = 16
    /// Bytes waiting to be written to one client before it is disconnected as not reading.
    public var sendQueueBytes = 256 * 1024
    public var operators: [Operator] = []
    public var maxChannelsPerClient = 100
    /// scrypt cost (log2 N) for new password hashes.
    public var passwordCost = 14
    /// The shortest password taken for an account (REGISTER, `chorusd account add` and `passwd`).
    public var passwordMinLength = AccountRules.defaultMinimumPasswordLength

    public typealias TimeAmount = Double  // seconds

    public init() {}

    /// `--no-limits`: for load tests on one machine.
    public mutating func removeLimits() {
        maxConnectionsPerIP = 0
        floodBurst = 0
        registrationsPerHour = 0
        apiRequestsPerSecond = 0
        sendQueueBytes = 64 * 1024 * 1024
    }

    public var resolvedCertificatePath: String { certificatePath ?? dataDirectory + "/cert.pem" }
    public var resolvedKeyPath: String { keyPath ?? dataDirectory + "/key.pem" }
    public var databasePath: String { dataDirectory + "/chorus.sqlite" }
    /// The key that signs report links, made on first start.
    public var linkKeyPath: String { dataDirectory + "/link.key" }
}

public struct ConfigError: Error, CustomStringConvertible {
    public var description: String
    public init(_ description: String) { self.description = description }
}

extension ServerConfig.Listener {
    /// `HOST:PORT`, `[::1]:PORT`, `:PORT` (all interfaces) or `off`. Returns nil for `off`.
    public static func parse(_ text: String) throws -> ServerConfig.Listener? {
        if text == "off" { return nil }
        guard let colon = text.lastIndex(of: ":"), let port = Int(text[text.index(after: colon)...]),
              (0...65535).contains(port) else {
            throw ConfigError("\"\(text)\" is not HOST:PORT (or off)")
        }
        var host = String(text[..<colon])
        if host.hasPrefix("[") && host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        return .init(host: host.isEmpty ? "0.0.0.0" : host, port: port)
    }
}

extension ServerConfig {
    /// Reads a config file of `key = value` lines (`#` starts a comment); see deploy/chorus.conf.
    public mutating func load(file path: String) throws {
        let text: String
        do { text = try String(contentsOfFile: path, encoding: .utf8) } catch {
            throw ConfigError("cannot read config file \(path): \(error.localizedDescription)")
        }
        var motdLines: [String] = []
        for (number, raw) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = raw.trimmingCharacters(in: .whitespaces)
            if line.isEmpty || line.hasPrefix("#") { continue }
            guard let eq = line.firstIndex(of: "=") else {
                throw ConfigError("\(path):\(number + 1): expected key = value")
            }
            let key = line[..<eq].trimmingCharacters(in: .whitespaces)
            let value = line[line.index(after: eq)...].trimmingCharacters(in: .whitespaces)
            func int() throws -> Int {
                guard let v = Int(value), v >= 0 else { throw ConfigError("\(path):\(number + 1): \(key) needs a whole number") }
                return v
            }
            func listener() throws -> Listener? {
                do { return try Listener.parse(value) } catch { throw ConfigError("\(path):\(number + 1): \(key): \(error)") }
            }
            func seconds() throws -> Double {
                guard let v = Double(value), v > 0 else { throw ConfigError("\(path):\(number + 1): \(key) needs a number of seconds") }
                return v
            }
            switch key {
            case "name": serverName = value
            case "network": network = value
            case "service-nick": serviceNick = value
            case "timezone":
                guard let tz = TimeZone(identifier: value) else { throw ConfigError("\(path):\(number + 1): unknown time zone \(value)") }
                timeZone = tz
            case "data": dataDirectory = value
            case "store":
                guard value == "sqlite" || value.hasPrefix("postgres://") || value.hasPrefix("postgresql://") else {
                    throw ConfigError("\(path):\(number + 1): store is sqlite or a PostgreSQL URL such as postgres://chorus@127.0.0.1/chorus")
                }
                store = value == "sqlite" ? nil : value
            case "tls": tls = try listener()
            case "plain": plain = try listener()
            case "web": web = try listener()
            case "web-plain": webPlain = try listener()
            case "web-origin": webOrigins.append(value)
            case "proxy-from", "web-proxy-from":
                for address in value.split(separator: ",").map({ $0.trimmingCharacters(in: .whitespaces) }) {
                    guard let parsed = try? SocketAddress(ipAddress: address, port: 0) else {
                        throw ConfigError("\(path):\(number + 1): \(key) takes IP addresses (\(address) is not one)")
                    }
                    if key == "proxy-from" { proxyFrom.insert(IRCServer.text(of: parsed)) } else { webProxyFrom.insert(IRCServer.text(of: parsed)) }
                }
            case "max-database-size":
                let digits = value.hasSuffix("M") || value.hasSuffix("m") ? String(value.dropLast()) : value
                guard let mib = Int(digits), mib > 0 else {
                    throw ConfigError("\(path):\(number + 1): max-database-size is a number of MiB, e.g. 2048")
                }
                maxDatabaseMiB = mib
            case "durability":
                guard let d = Durability(rawValue: value) else { throw ConfigError("\(path):\(number + 1): durability is crash or power-loss") }
                durability = d
            case "log-format":
                guard let format = LogFormat(rawValue: value) else { throw ConfigError("\(path):\(number + 1): log-format is text or json") }
                logFormat = format
            case "metrics":
                guard let access = MetricsAccess(rawValue: value) else {
                    throw ConfigError("\(path):\(number + 1): metrics is loopback, any or off")
                }
                metrics = access
            case "web-url":
                guard let url = URL(string: value), url.scheme == "https" || url.scheme == "http", url.host != nil else {
                    throw ConfigError("\(path):\(number + 1): web-url needs an address such as https://chat.example.org")
                }
                webURL = value.hasSuffix("/") ? String(value.dropLast()) : value
            case "certificate": certificatePath = value
            case "key": keyPath = value
            case "motd": motdLines.append(value)
            case "motd-file":
                guard let m = try? String(contentsOfFile: value, encoding: .utf8) else {
                    throw ConfigError("\(path):\(number + 1): cannot read motd-file \(value)")
                }
                motdLines.append(contentsOf: m.split(separator: "\n", omittingEmptySubsequences: false).map(String.init))
            case "rooms":
                guard ["open", "members"].contains(value) else { throw ConfigError("\(path):\(number + 1): rooms is open or members, not \(value)") }
                roomsOpen = value == "open"
            case "webhooks-to-private":
                guard ["on", "off"].contains(value) else { throw ConfigError("\(path):\(number + 1): webhooks-to-private is on or off") }
                webhooksToPrivate = value == "on"
            case "push-to-private":
                guard ["on", "off"].contains(value) else { throw ConfigError("\(path):\(number + 1): push-to-private is on or off") }
                pushToPrivate = value == "on"
            case "push-contact":
                guard value.hasPrefix("mailto:") || value.hasPrefix("https://") else {
                    throw ConfigError("\(path):\(number + 1): push-contact is a mailto: or https:// URL")
                }
                pushContact = value
            case "registrations-per-hour": registrationsPerHour = try int()
            case "api-rate": apiRequestsPerSecond = try int()
            case "history-replay": historyReplayLines = try int()
            case "history-page-limit": historyPageLimit = max(1, try int())
            case "ping-interval": pingInterval = try seconds()
            case "reminder-interval": reminderInterval = try seconds()
            case "ping-timeout": pingTimeout = try seconds()
            case "registration-timeout": registrationTimeout = try seconds()
            case "max-connections-per-ip": maxConnectionsPerIP = try int()
            case "flood-burst": floodBurst = try int()
            case "flood-rate":
                guard let v = Double(value), v > 0 else { throw ConfigError("\(path):\(number + 1): flood-rate needs a positive number") }
                floodRate = v
            case "flood-queue": floodQueue = try int()
            case "command-pipeline": commandPipeline = max(1, try int())
            case "sendq": sendQueueBytes = max(4096, try int())
            case "max-channels": maxChannelsPerClient = max(1, try int())
            case "password-cost": passwordCost = min(20, max(10, try int()))
            case "password-min-length": passwordMinLength = min(128, max(1, try int()))
            case "oper":
                let parts = value.split(separator: " ", maxSplits: 1).map(String.init)
                guard parts.count == 2, parts[1].hasPrefix("$scrypt$") else {
                    throw ConfigError("\(path):\(number + 1): oper = NAME HASH (make the hash with `chorusd hash-password`)")
                }
                operators.append(Operator(name: parts[0], passwordHash: parts[1]))
            default:
                throw ConfigError("\(path):\(number + 1): unknown setting \"\(key)\"")
            }
        }
        if !motdLines.isEmpty { motd = motdLines.joined(separator: "\n") }
    }
}
