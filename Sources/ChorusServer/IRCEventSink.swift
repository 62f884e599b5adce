import ChorusBot
import ChorusCore
import ChorusIRC
import ChorusWorkspace
import Foundation

/// The IRC side as one of the Workspace's event sinks: committed events come back to the server's
/// loop, where `IRCServer.deliver` carries out each plan. Holds the server weakly: the Workspace
/// outlives no server, but a sink must not keep one alive.
final class IRCEventSink: EventSink, @unchecked Sendable {
    weak var server: IRCServer?

    init(server: IRCServer) {
        self.server = server
    }

    func publish(_ deliveries: [Delivery], effects: [Outcome.Effect], origin: AnyObject?) {
        guard let server else { return }
        server.loop.execute {
            let reply = origin as? Reply
            for delivery in deliveries { server.deliver(delivery, reply: reply) }
            server.carryOut(effects, askedBy: reply?.client)
        }
    }
}

/// A room's event line as IRC carries it: the sentence (times in the server's zone) and the
/// `chorus/…` tags, serialized as the history row keeps them.
struct IRCEventWording: EventWording {
    let timeZone: TimeZone
    let now: @Sendable () -> Date

    func roomLine(_ event: Event, roomName: String) -> (text: String, clientTags: String) {
        let room = event.room
        let text = EventText(when: When(timeZone: timeZone), now: now(), roomName: { $0 == room ? roomName : $0 }).line(event)
        let tags = EventText.tags(event, roomName: roomName).map { Message.Tag($0.0, $0.1) }
        return (text, Message.serializedTags(tags))
    }
}
