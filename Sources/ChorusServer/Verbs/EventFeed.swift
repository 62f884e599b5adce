import ChorusBot
import ChorusCore
import ChorusIRC

extension IRCServer {
    /// The event feed for bots over IRC, the same as the API's (`GET /api/v1/events`): `CHATHISTORY
    /// AFTER <bot> msgid=e<event id> <limit>` answers a `chathistory` batch of the events the account
    /// hears after that position, oldest first, each as the bot's tagged NOTICE with `msgid=e<id>`
    /// (its `chorus/event-id`). `msgid=e0` reads from the start; a bot that was down asks after the
    /// last id it kept and misses nothing.
    func eventFeed(_ reply: Reply, _ sub: String, _ p: [String]) {
        let client = reply.client
        let target = p[0]
        guard let account = client.account else {
            return reply.fail("INVALID_TARGET", context: [sub, target], "The event feed is an account's: log in first")
        }
        let usage = "The event feed is read by position: CHATHISTORY AFTER \(target) msgid=e<event id> <limit> (msgid=e0 from the start)"
        guard sub == "AFTER" else { return reply.fail("INVALID_PARAMS", context: [sub, target], usage) }
        guard p[1].hasPrefix("msgid=e"), let after = Int64(p[1].dropFirst("msgid=e".count)), after >= 0,
              let asked = Int(p[2]), asked > 0 else {
            return reply.fail("INVALID_PARAMS", context: [sub, target], usage)
        }
        let caller = WebAPI.Caller(account: account.name, key: account.key, token: 0)
        reply.wait(for: web.api.heard(by: caller, after: after, limit: min(asked, config.historyPageLimit))) { result in
            guard case .success(let page) = result else {
                return reply.fail("MESSAGE_ERROR", context: [sub, target], "Could not read the events")
            }
            reply.batch("chathistory", [target]) {
                for event in page.events {
                    let tags = EventText.tags(event, roomName: event.room.flatMap { self.rooms[$0]?.name }).map { Message.Tag($0.0, $0.1) }
                    reply.add(Outgoing(Message(source: self.serviceSource, "NOTICE", [client.nick, self.eventLine(event)]), time: event.at,
                                       msgid: "e\(event.id)", account: self.config.serviceNick, clientTags: tags, overlong: .split))
                }
            }
        }
    }
}
