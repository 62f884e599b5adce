import ChorusBot
import ChorusCore
import ChorusWorkspace
import Foundation
import NIOCore
import NIOHTTP1

/// A calendar feed (`/calendar.ics`, RFC 5545) behind the signed link `!ical new` gave: read as the
/// account may see it today, in its own time zone, until `!ical revoke` deletes the feed. Calendar
/// apps poll it, so it is read beside the Workspace's writer, not queued behind it.
extension WebApplication {
    func calendar(_ request: WebRequest) -> EventLoopFuture<WebResponse> {
        followingLink(request, naming: ["a", "f"], calendar(fields:))
    }

    private func calendar(fields: [String: String]) -> EventLoopFuture<WebResponse> {
        guard let id = Int64(fields["f"]!) else { return tamperedLink }
        let account = fields["a"]!
        let (store, now, serverZone, network) = (server.store, server.now, config.timeZone, config.network)
        return server.background { () -> String in
            guard let feed = try store.calendarFeed(id), feed.account == Account.key(account) else {
                throw LinkRefusal(status: .gone, text: "This calendar feed was revoked: !ical new makes another.")
            }
            let zone = try store.timeZone(of: feed.account, otherwise: serverZone)
            let invocation: Invocation
            do {
                invocation = try Self.linkInvocation(account: account, room: feed.room, zone: zone, now: now(), store)
            } catch is JobError {
                throw LinkRefusal(status: .forbidden, text: "This feed's account is no longer a member of its room.")
            }
            let title = invocation.room.map { "\(network) \($0.name)" } ?? "\(network) — \(account)"
            let bot = Bot(boards: Boards(store: store, timeZone: serverZone, now: now))
            return try bot.calendar(invocation, room: invocation.room, title: title).text
        }
        .map { text in
            var response = WebResponse(status: .ok, body: ByteBuffer(string: text))
            response.headers.add(name: "Content-Type", value: "text/calendar; charset=utf-8")
            response.headers.add(name: "Content-Disposition", value: "inline; filename=\"chorus.ics\"")
            response.headers.add(name: "Cache-Control", value: "private, max-age=300")
            return response
        }
        .recover { ($0 as? LinkRefusal)?.response ?? .text(.internalServerError, "The feed could not be read: \($0)") }
    }
}
