import Synchronization

/// The accounts that can be told an event as it happens: connected to this process or, in a
/// cluster, to another. The transport keeps it on its loop; the Workspace's writer reads it when it
/// plans a command's deliveries, and queues the event for those not connected in the command's own
/// transaction: a crash after the commit cannot lose their notice.
public final class ConnectedAccounts: Sendable {
    private let connections = Mutex<[String: Int]>([:])

    public init() {}

    /// One more connection of the account (by key).
    public func connect(_ key: String) {
        connections.withLock { $0[key, default: 0] += 1 }
    }

    /// One connection of the account fewer.
    public func disconnect(_ key: String) {
        connections.withLock { counts in
            guard let n = counts[key] else { return }
            counts[key] = n > 1 ? n - 1 : nil
        }
    }

    public func contains(_ key: String) -> Bool {
        connections.withLock { $0[key] != nil }
    }

    /// Those of `keys` with no connection, in one look.
    public func notConnected(among keys: [String]) -> [String] {
        connections.withLock { counts in keys.filter { counts[$0] == nil } }
    }
}
