import ChorusIRC

/// Who watches which nick (IRCv3 MONITOR): each client's list, and each nick's watchers, both by
/// folded nick. It lives on the server's loop beside the `ClientRegistry`; a client's list goes
/// when its connection does.
struct Monitors {
    /// The most nicks one client may watch (ISUPPORT `MONITOR`).
    static let limit = 100

    private var lists: [ObjectIdentifier: [String]] = [:]
    private var watchers: [String: [Client]] = [:]

    /// The nicks `client` watches, as it typed them, in the order it added them.
    func list(of client: Client) -> [String] { lists[ObjectIdentifier(client)] ?? [] }

    func watchers(of nickKey: String) -> [Client] { watchers[nickKey] ?? [] }

    /// Adds what fits of `nicks` (already checked); returns those added and those left out for the limit.
    mutating func add(_ nicks: [String], for client: Client) -> (added: [String], full: [String]) {
        var list = lists[ObjectIdentifier(client)] ?? []
        var added: [String] = [], full: [String] = []
        for nick in nicks {
            let key = Names.fold(nick)
            if list.contains(where: { Names.fold($0) == key }) { continue }
            guard list.count < Self.limit else { full.append(nick); continue }
            list.append(nick)
            watchers[key, default: []].append(client)
            added.append(nick)
        }
        lists[ObjectIdentifier(client)] = list
        return (added, full)
    }

    mutating func remove(_ nicks: [String], for client: Client) {
        guard var list = lists[ObjectIdentifier(client)] else { return }
        for nick in nicks {
            let key = Names.fold(nick)
            guard list.contains(where: { Names.fold($0) == key }) else { continue }
            list.removeAll { Names.fold($0) == key }
            unwatch(key, by: client)
        }
        lists[ObjectIdentifier(client)] = list.isEmpty ? nil : list
    }

    /// MONITOR C, and a connection closing.
    mutating func clear(for client: Client) {
        guard let list = lists.removeValue(forKey: ObjectIdentifier(client)) else { return }
        for nick in list { unwatch(Names.fold(nick), by: client) }
    }

    private mutating func unwatch(_ key: String, by client: Client) {
        watchers[key]?.removeAll { $0 === client }
        if watchers[key]?.isEmpty == true { watchers[key] = nil }
    }
}
