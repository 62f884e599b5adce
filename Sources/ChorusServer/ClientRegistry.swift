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
    /// Registered clients by folded nick: the first connection under each.
    private(set) var nicks: [String: Client] = [:]
    /// An account's further connections under the nick its first one holds (a phone beside a
    /// laptop), by folded nick. They are one person to everyone else: one name in the rooms, and
    /// every session hears what the person would.
    private(set) var twins: [String: [Client]] = [:]
    /// Each connection's own AWAY text; `Client.away` is the person's (`SharedNick.swift`).
    private(set) var ownAway: [ObjectIdentifier: String] = [:]
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
    /// Every connection under `client`'s nick, the first one first: `client` alone unless its
    /// account is connected more than once under it.
    func sharing(_ client: Client) -> [Client] {
        guard let more = twins[client.nickKey], let first = nicks[client.nickKey] else { return [client] }
        return [first] + more
    }
    /// Whether another connection is under `client`'s nick: asked on paths every line takes,
    /// where `sharing` would make an array for one connection.
    func sharesNick(_ client: Client) -> Bool { twins[client.nickKey] != nil }
    /// The connection that speaks for `client`'s nick to the rest of the network (presence, WHOIS).
    func first(sharing client: Client) -> Client { nicks[client.nickKey] ?? client }
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

    /// The client finished registering under the nick a connection of its own account holds.
    mutating func register(_ client: Client, besides first: Client) {
        unregisteredCount -= 1
        twins[first.nickKey, default: []].append(client)
        if let key = client.account?.key { startSession(client, key) }
    }

    /// Notes a connection's own AWAY (nil: here).
    mutating func noteAway(of client: Client, _ text: String?) {
        ownAway[ObjectIdentifier(client)] = text
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
    /// Every connection under the nick takes the new one.
    mutating func rename(_ client: Client, to nick: String, at time: Date) {
        let group = sharing(client)
        remember(client, at: time)
        nicks.removeValue(forKey: client.nickKey)
        let more = twins.removeValue(forKey: client.nickKey)
        let key = Names.fold(nick)
        for connection in group {
            connection.nick = nick
            connection.nickKey = key
        }
        nicks[key] = group[0]
        if let more { twins[key] = more }
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
        ownAway[ObjectIdentifier(client)] = nil
        if var more = twins[client.nickKey] {
            // Another connection under the nick carries on; the first's place passes to the next.
            if nicks[client.nickKey] === client { nicks[client.nickKey] = more.removeFirst() } else { more.removeAll { $0 === client } }
            twins[client.nickKey] = more.isEmpty ? nil : more
        } else {
            nicks.removeValue(forKey: client.nickKey)
        }
        if let key = client.account?.key {
            sessions[key]?.removeAll { $0 === client }
            if sessions[key]?.isEmpty == true { sessions[key] = nil }
            connected.disconnect(key)
        }
        if nicks[client.nickKey] == nil { remember(client, at: time) }
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
