import ChorusCore
import ChorusIRC

/// One person, several connections: a second device logged in to the same account takes the nick
/// its first connection holds instead of `alice_`, and the two are one person to everyone else
/// (`ClientRegistry.twins`). Each session is in the person's rooms and hears what they hear; the
/// rest of the network sees one JOIN, one name in NAMES and WHO, one QUIT when the last session
/// goes. What one session does as the person (PART, NICK, a JOIN, a line to someone) reaches the
/// others; what it asks (WHOIS, LIST, a bot command's answer) is answered to it alone. Sessions
/// on other nodes of a cluster share the nick too (`PersonAcrossNodes`).
extension IRCServer {
    /// AWAY from one session: the person is away while every session of theirs is (as Ergo has
    /// it), here and on other nodes, with the text of the last to go away here.
    func setAway(_ client: Client, _ text: String?) {
        registry.noteAway(of: client, text)
        personAwayChanged(client)
    }

    /// A second session came: it is here, so the person is.
    func sessionArrived(_ client: Client) {
        personAwayChanged(registry.first(sharing: client))  // told through the first: the new one is in no room yet
    }

    /// After a session closed: the person is away if every session left is.
    func sessionsLeft(after client: Client) {
        registry.noteAway(of: client, nil)
        personAwayChanged(registry.first(sharing: client))
    }

    /// The person's sessions here, taken together: away while every one is, with the text of the
    /// last of them (what this node publishes for them to the others).
    func awayHere(of client: Client) -> String? {
        let owns = registry.sharing(client).map { registry.ownAway[ObjectIdentifier($0)] }
        return owns.allSatisfy { $0 != nil } ? owns.compactMap { $0 }.last : nil
    }

    /// Works out again whether the person of `client` is away, from their sessions here and their
    /// connections on other nodes (`PersonAcrossNodes`): every session carries the answer, and the
    /// rest of the network hears when it changes.
    func personAwayChanged(_ client: Client) {
        let sessions = registry.sharing(client)
        var text = awayHere(of: client)
        if text != nil, remote.holders(of: client.nickKey).contains(where: { $0.away == nil && PresenceRecord.samePerson($0.account, client.accountName) }) {
            text = nil  // here on another device
        }
        // What this node publishes (`awayHere`) may have changed even when the person's state did not.
        defer { cluster?.publishAwayIfChanged(registry.first(sharing: client)) }
        guard sessions.contains(where: { $0.away != text }) else { return }
        for session in sessions { session.away = text }
        let out = Outgoing(Message(source: client.prefix, "AWAY", text.map { [$0] } ?? []), time: now(), account: client.accountName)
        broadcast(out, to: peersAndWatchers(of: client), except: client, only: { $0.caps.contains(.awayNotify) })
    }

    /// A ban on the mask of any of the person's sessions bans the person: each session keeps its
    /// own `user@host`, and a second device must not be a way round a ban.
    func isBanned(_ client: Client, from room: LiveRoom) -> Bool {
        guard registry.sharesNick(client) else { return room.isBanned(client) }
        return registry.sharing(client).contains { room.isBanned($0) }
    }

    /// A line the person sent from one session, shown in the others' conversations too (as
    /// `echo-message` shows it to the sender); tags alone only where they are understood.
    func copyToOtherSessions(_ out: Outgoing, of client: Client) {
        guard registry.sharesNick(client) else { return }
        let isTagMsg = out.message.command == "TAGMSG"
        for session in registry.sharing(client) where session !== client {
            if isTagMsg && !session.caps.contains(.messageTags) { continue }
            send(out, to: session)
        }
    }
}

extension Client {
    /// Logged in to the same account: another session of the same person.
    func isSamePerson(as other: Client) -> Bool {
        guard let account else { return false }
        return account.key == other.account?.key
    }
}
