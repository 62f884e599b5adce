import Synchronization

/// The accounts that can be told an event as it happens: connected to this process or, in a
/// cluster, to another. The transport keeps it on its loop; the Workspace's writer reads it when it
/// plans a command's deliveries, and in the command's own transaction queues the event for those
/// not connected, and posts a direct line for those connected to other processes
/// (`OtherProcesses`): a crash after the commit loses neither.
public final class ConnectedAccounts: Sendable {
    private struct Count {
        var here = 0
        var elsewhere = 0
    }
    private let connections = Mutex<[String: Count]>([:])

    public init() {}

    /// One more connection of the account (by key), to this process or to another.
    public func connect(_ key: String, elsewhere: Bool = false) {
        connections.withLock { counts in
            if elsewhere { counts[key, default: Count()].elsewhere += 1 } else { counts[key, default: Count()].here += 1 }
        }
    }

    /// One connection of the account fewer.
    public func disconnect(_ key: String, elsewhere: Bool = false) {
        connections.withLock { counts in
            guard var n = counts[key] else { return }
            if elsewhere { n.elsewhere = max(0, n.elsewhere - 1) } else { n.here = max(0, n.here - 1) }
            counts[key] = n.here + n.elsewhere > 0 ? n : nil
        }
    }

    public func contains(_ key: String) -> Bool {
        connections.withLock { $0[key] != nil }
    }

    /// Those of `keys` with no connection, in one look.
    public func notConnected(among keys: [String]) -> [String] {
        connections.withLock { counts in keys.filter { counts[$0] == nil } }
    }

    /// Those of `keys` connected to another process (and perhaps this one too), in one look.
    public func connectedElsewhere(among keys: [String]) -> [String] {
        connections.withLock { counts in keys.filter { (counts[$0]?.elsewhere ?? 0) > 0 } }
    }
}
