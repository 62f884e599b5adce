import Foundation
import NIOSSL
import PostgresNIO

/// Where the PostgreSQL store is, from a URL as libpq and every PostgreSQL tool write it:
/// `postgres://user:password@host:5432/database?sslmode=require&schema=chorus`.
///
/// - `host` may also be a folder holding the server's Unix socket, given as `?host=/run/postgresql`.
/// - Missing parts default as libpq's do: port 5432, the user from `$USER`, the database named as
///   the user, the password from `$PGPASSWORD`.
/// - `sslmode` is `disable`, `prefer` (the default: TLS when the server offers it) or `require`.
///   As libpq's `require`, the server's certificate is not checked against a CA.
/// - `schema` keeps Chorus's tables in a schema of their own (created if missing).
public struct PostgresLocation: Sendable, CustomStringConvertible {
    public var host: String
    public var port: Int
    public var socketFolder: String?
    public var user: String
    var password: String?
    public var database: String
    public var tls: TLSMode
    public var schema: String?

    public enum TLSMode: String, Sendable {
        case disable, prefer, require
    }

    public struct BadLocation: Error, CustomStringConvertible {
        public var description: String
    }

    /// Could not connect, and why: said once at start, where an operator reads it.
    public struct Unreachable: Error, CustomStringConvertible {
        var location: String
        var reason: String
        public var description: String { "Cannot reach PostgreSQL at \(location): \(reason)" }
    }

    public init(_ text: String, environment: [String: String] = ProcessInfo.processInfo.environment) throws {
        guard let url = URLComponents(string: text), url.scheme == "postgres" || url.scheme == "postgresql" else {
            throw BadLocation(description: "\"\(text)\" is not a PostgreSQL URL: write postgres://user@host:5432/database")
        }
        var query: [String: String] = [:]
        for item in url.queryItems ?? [] { query[item.name] = item.value ?? "" }
        for name in query.keys where !["sslmode", "schema", "host"].contains(name) {
            throw BadLocation(description: "Unknown setting \"\(name)\" in the PostgreSQL URL: sslmode, schema and host are understood")
        }
        socketFolder = query["host"].flatMap { $0.hasPrefix("/") ? $0 : nil }
        host = url.host.map { $0.removingPercentEncoding ?? $0 }.flatMap { $0.isEmpty ? nil : $0 } ?? "127.0.0.1"
        port = url.port ?? 5432
        user = url.user?.removingPercentEncoding ?? environment["USER"] ?? "postgres"
        password = url.password?.removingPercentEncoding ?? environment["PGPASSWORD"]
        let path = url.path.hasPrefix("/") ? String(url.path.dropFirst()) : url.path
        database = path.isEmpty ? user : (path.removingPercentEncoding ?? path)
        guard let mode = TLSMode(rawValue: query["sslmode"] ?? "prefer") else {
            throw BadLocation(description: "sslmode is disable, prefer or require, not \"\(query["sslmode"]!)\"")
        }
        tls = mode
        schema = query["schema"]
        if let schema, !Self.isIdentifier(schema) {
            throw BadLocation(description: "\"\(schema)\" is not a schema name: letters, digits and _, not starting with a digit")
        }
    }

    /// The URL without its password, for logs and messages.
    public var description: String {
        let place = socketFolder.map { "\($0)/.s.PGSQL.\(port)" } ?? "\(host):\(port)"
        return "postgres://\(user)@\(place)/\(database)" + (schema.map { "?schema=\($0)" } ?? "")
    }

    /// What the server's `pg_stat_activity` shows for Chorus's connections: `chorusd`, and the
    /// schema when there is one.
    public var applicationName: String {
        "chorusd" + (schema.map { " " + $0 } ?? "")
    }

    /// The channel whose NOTIFY wakes this installation's processes: one per schema, so that
    /// installations sharing a database do not wake each other (`chorus_lines`, or
    /// `chorus_lines_<schema>`; a long schema name is shortened with a hash of it, channels being
    /// identifiers of at most 63 bytes).
    public var channel: String {
        guard let schema else { return "chorus_lines" }
        let whole = "chorus_lines_" + schema
        if whole.utf8.count <= 63 { return whole }
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325  // FNV-1a: the same name on every node and every run
        for byte in schema.utf8 { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3 }
        return "chorus_lines_" + schema.prefix(33) + "_" + String(hash, radix: 16).leftPadded(to: 16)
    }

    public var configuration: PostgresConnection.Configuration {
        get throws {
            var configuration = try connection
            configuration.options.additionalStartupParameters = [("application_name", String(applicationName.prefix(63)))]
            return configuration
        }
    }

    /// The client's configuration, with `settings` given to each connection at its start
    /// (run-time parameters, as `SET` would give them).
    func clientConfiguration(settings: [(String, String)]) throws -> PostgresClient.Configuration {
        var configuration: PostgresClient.Configuration
        if let socketFolder {
            configuration = .init(unixSocketPath: "\(socketFolder)/.s.PGSQL.\(port)", username: user, password: password, database: database)
        } else {
            var tlsConfiguration = TLSConfiguration.makeClientConfiguration()
            tlsConfiguration.certificateVerification = .none
            let mode: PostgresClient.Configuration.TLS
            switch tls {
            case .disable: mode = .disable
            case .prefer: mode = .prefer(tlsConfiguration)
            case .require: mode = .require(tlsConfiguration)
            }
            configuration = .init(host: host, port: port, username: user, password: password, database: database, tls: mode)
        }
        configuration.options.additionalStartupParameters = [("application_name", String(applicationName.prefix(63)))] + settings
        return configuration
    }

    private var connection: PostgresConnection.Configuration {
        get throws {
            if let socketFolder {
                return .init(unixSocketPath: "\(socketFolder)/.s.PGSQL.\(port)", username: user, password: password, database: database)
            }
            var tlsConfiguration = TLSConfiguration.makeClientConfiguration()
            tlsConfiguration.certificateVerification = .none
            let mode: PostgresConnection.Configuration.TLS
            switch tls {
            case .disable: mode = .disable
            case .prefer: mode = .prefer(try NIOSSLContext(configuration: tlsConfiguration))
            case .require: mode = .require(try NIOSSLContext(configuration: tlsConfiguration))
            }
            return .init(host: host, port: port, username: user, password: password, database: database, tls: mode)
        }
    }

    static func isIdentifier(_ name: String) -> Bool {
        guard let first = name.first, first.isLetter || first == "_", name.count <= 63 else { return false }
        return name.allSatisfy { ($0.isASCII && ($0.isLetter || $0.isNumber)) || $0 == "_" }
    }

    /// `"name"`, for a name `isIdentifier` accepted (and for `channel`, made of one).
    static func quotedIdentifier(_ name: String) -> String { "\"\(name)\"" }
}

extension String {
    fileprivate func leftPadded(to width: Int) -> String {
        String(repeating: "0", count: max(0, width - count)) + self
    }
}
