import ChorusIRC

/// One person, several connections: a second device logged in to the same account takes the nick
/// its first connection holds instead of `alice_`, and the two are one person to everyone else
/// (`ClientRegistry.twins`). Each session is in the person's rooms and hears what they hear; the
/// rest of the network sees one JOIN, one name in NAMES and WHO, one QUIT when the last session
/// goes. What one session does as the person (PART, NICK, a JOIN, a line to someone) reaches the
/// others; what it asks (WHOIS, LIST, a bot command's answer) is answered to it alone.
extension IRCServer {
    /// A session closed while another carries the nick on: it leaves its rooms without a word, and
    /// the nick's presence record passes to the session that now speaks for it.
    func sessionClosed(_ client: Client) {
        if let record = published.removeValue(forKey: ObjectIdentifier(client)) {
            published[ObjectIdentifier(registry.first(sharing: client))] = record
        }
        monitors.clear(for: client)
        client.closing = true
        tokenLogins.removeValue(forKey: ObjectIdentifier(client))
        releaseHeldLines(of: client)
        for room in client.rooms { room.remove(client) }
        client.rooms.removeAll()
    }

    /// A line the person sent from one session, shown in the others' conversations too (as
    /// `echo-message` shows it to the sender).
    func copyToOtherSessions(_ out: Outgoing, of client: Client, only recipients: (Client) -> Bool = { _ in true }) {
        let sessions = registry.sharing(client)
        guard sessions.count > 1 else { return }
        let isTagMsg = out.message.command == "TAGMSG"
        for session in sessions where session !== client && recipients(session) {
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
