import Foundation
import NIOCore
import NIOSSL

/// The certificate and key files as they were when last read: what the minute's check compares,
/// so a renewal (Let's Encrypt's, say) is picked up without a restart.
struct CertificateStamp: Equatable {
    let files: [FileStamp?]

    struct FileStamp: Equatable {
        let modified: Date?
        let size: Int?
    }

    init(_ config: ServerConfig) {
        files = [config.resolvedCertificatePath, config.resolvedKeyPath].map { path in
            (try? FileManager.default.attributesOfItem(atPath: path)).map {
                FileStamp(modified: $0[.modificationDate] as? Date, size: $0[.size] as? Int)
            }
        }
    }
}

/// SIGHUP: the config file again, and the certificate. What a running server can take changes at
/// once (the MOTD, limits, flood control, operators, the web side's origins, the certificate for
/// the handshakes to come); what it cannot (the addresses it listens on, its name, the data folder,
/// the bot's nick, the time zone, password hashing) is logged as waiting for a restart.
extension IRCServer {
    /// A setting a running server cannot take: its config key, and where it is kept.
    private struct RestartOnly {
        let key: String
        let differs: (ServerConfig, ServerConfig) -> Bool
        /// Puts the running value back into a reloaded config.
        let keep: (inout ServerConfig, ServerConfig) -> Void

        init<Value: Equatable>(_ key: String, _ path: WritableKeyPath<ServerConfig, Value>) {
            self.key = key
            differs = { $0[keyPath: path] != $1[keyPath: path] }
            keep = { $0[keyPath: path] = $1[keyPath: path] }
        }
    }

    private static let restartOnly: [RestartOnly] = [
        RestartOnly("name", \.serverName), RestartOnly("data", \.dataDirectory), RestartOnly("store", \.store),
        RestartOnly("tls", \.tls), RestartOnly("plain", \.plain), RestartOnly("web", \.web),
        RestartOnly("web-plain", \.webPlain), RestartOnly("service-nick", \.serviceNick),
        RestartOnly("timezone", \.timeZone), RestartOnly("reminder-interval", \.reminderInterval),
        RestartOnly("password-cost", \.passwordCost), RestartOnly("password-min-length", \.passwordMinLength),
        RestartOnly("push-contact", \.pushContact), RestartOnly("push-to-private", \.pushToPrivate),
    ]

    /// Takes `new` (the config file read again, with the command line's flags over it). Returns the
    /// config keys that wait for a restart.
    @discardableResult
    public func reload(_ new: ServerConfig) -> [String] {
        (try? loop.submit { self.apply(new) }.wait()) ?? []
    }

    private func apply(_ new: ServerConfig) -> [String] {
        let old = config
        var next = new
        let waiting = Self.restartOnly.filter { $0.differs(old, new) }.map(\.key)
        // What runs keeps its settings until the restart, so that it stays consistent.
        for setting in Self.restartOnly { setting.keep(&next, old) }
        config = next
        welcome = Welcome(config: next, createdAt: welcome.createdAt, fileHost: fileHost, vapid: push?.vapidKey)
        listeners.configurationReloaded(from: old)
        logger.info("configuration reloaded", metadata: waiting.isEmpty ? [:] : ["waiting-for-restart": "\(waiting.joined(separator: ", "))"])
        return waiting
    }
}
