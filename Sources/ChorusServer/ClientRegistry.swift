import ChorusIRC
import ChorusWorkspace
import Foundation

/// Who is connected: every connection, the registered ones by nick, the logged-in ones by account,
/// connections per address, recent nicks for WHOWAS, and the counts LUSERS reports. It lives on
/// the server's loop and changes only through these methods, so the counts cannot drift from the
/// tables.
struct ClientRegistry {
    /// The accounts with a session, as the Workspace reads them (shared with `RemotePresence`).
    let connected: ConnectedAccounts

    init(connected: ConnectedAccounts) {
        self.connected = connected
    }
    private(set) var clients: [ObjectIdentifier: Client] = [:]
    /// Registered clients by folded nick.
    private(set) var nicks: [String: Client] = [:]
    /// Logged-in registered connections by account key: where an account's direct events go.
    private(set) var sessions: [String: [Client]] = [:]
    private(set) var whowas: [WhowasEntry] = []
    private var connectionsPerIP: [String: Int] = [:]

    private(set) var unregisteredCount = 0
    private(set) var invisibleCount = 0
    private(set) var operCount = 0
    /// The most registered clients there have been at once since start (LUSERS' "max").
    private(set) var peakUsers = 0

    /// How many nicks WHOWAS remembers.
    static let whowasLength = 500

    struct WhowasEntry {
        var nick: String
        var user: String
        var host: String
        var realname: String
        var account: String?
        var time: Date
    }

    func client(nick: String) -> Client? { nicks[Names.fold(nick)] }
    func connections(ofAccount key: String) -> [Client] { sessions[key] ?? [] }
    func connections(fromIP ip: String) -> Int { connectionsPerIP[ip, default: 0] }
    var registeredCount: Int { nicks.count }

    /// Counts a new connection, unless its address already has `limit` (0: no limit).
    mutating func accept(_ client: Client, limit: Int) -> Bool {
        if limit > 0, connectionsPerIP[client.ip, default: 0] >= limit { return false }
        clients[ObjectIdentifier(client)] = client
        connectionsPerIP[client.ip, default: 0] += 1
        unregisteredCount += 1
        return true
    }

    /// The client finished registering under its nick (checked free by the caller).
    mutating func register(_ client: Client) {
        unregisteredCount -= 1
        nicks[client.nickKey] = client
        peakUsers = max(peakUsers, nicks.count)
        if let key = client.account?.key { startSession(client, key) }
    }

    /// A registered client logged in.
    mutating func logIn(_ client: Client, account key: String) {
        startSession(client, key)
    }

    private mutating func startSession(_ client: Client, _ key: String) {
        sessions[key, default: []].append(client)
        connected.connect(key)
    }

    /// A registered client takes a new nick; the old one goes to WHOWAS.
    mutating func rename(_ client: Client, to nick: String, at time: Date) {
        remember(client, at: time)
        nicks.removeValue(forKey: client.nickKey)
        client.nick = nick
        client.nickKey = Names.fold(nick)
        nicks[client.nickKey] = client
    }

    /// The connection is gone; false if it was already forgotten. A registered client's nick goes to WHOWAS.
    mutating func remove(_ client: Client, at time: Date) -> Bool {
        guard clients.removeValue(forKey: ObjectIdentifier(client)) != nil else { return false }
        if let n = connectionsPerIP[client.ip] { connectionsPerIP[client.ip] = n > 1 ? n - 1 : nil }
        guard client.registered else {
            unregisteredCount -= 1
            return true
        }
        setInvisible(client, false)
        setOper(client, false)
        nicks.removeValue(forKey: client.nickKey)
        if let key = client.account?.key {
            sessions[key]?.removeAll { $0 === client }
            if sessions[key]?.isEmpty == true { sessions[key] = nil }
            connected.disconnect(key)
        }
        remember(client, at: time)
        return true
    }

    /// User modes that LUSERS counts change only here.
    mutating func setInvisible(_ client: Client, _ on: Bool) {
        guard client.invisible != on else { return }
        client.invisible = on
        invisibleCount += on ? 1 : -1
    }

    mutating func setOper(_ client: Client, _ on: Bool) {
        guard client.isOper != on else { return }
        client.isOper = on
        operCount += on ? 1 : -1
    }

    private mutating func remember(_ client: Client, at time: Date) {
        whowas.append(WhowasEntry(nick: client.nick, user: client.user, host: client.host, realname: client.realname,
                                  account: client.accountName, time: time))
        if whowas.count > Self.whowasLength { whowas.removeFirst(whowas.count - Self.whowasLength) }
    }
}
