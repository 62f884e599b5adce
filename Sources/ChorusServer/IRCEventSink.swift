import ChorusBot
import ChorusCore
import ChorusIRC
import ChorusWorkspace
import Foundation
import NIOCore

/// The IRC side as one of the Workspace's event sinks: committed events come back to the server's
/// loop, where `IRCServer.deliver` carries out each plan. Holds the server weakly: the Workspace
/// outlives no server, but a sink must not keep one alive.
final class IRCEventSink: EventSink, @unchecked Sendable {
    weak var server: IRCServer?

    init(server: IRCServer) {
        self.server = server
    }

    func publish(_ batch: [Committed]) {
        guard let server else { return }
        // The rooms whose events were committed: a webhook deliverer looks at once only for them.
        var rooms = Set<String>()
        for change in batch {
            for delivery in change.deliveries { if let room = delivery.event.room { rooms.insert(Account.key(room)) } }
        }
        server.loop.execute {
            for change in batch {
                let asker = change.origin as? Asker
                if !change.outcome.refused { asker?.committed?() }
                for delivery in change.deliveries { server.deliver(delivery, reply: asker?.reply) }
                server.carryOut(change.outcome.effects, askedBy: asker?.reply.client)
                asker?.answer.succeed(change.outcome)
            }
            server.web.api.wake()
            if !rooms.isEmpty { server.webhooks?.wake(rooms: rooms) }
        }
    }
}

/// A line of this server's that waits for a change to commit: the sink puts the change's events
/// for the asker in `reply` and then completes `answer`, on the loop, in the same turn.
final class Asker {
    let reply: Reply
    let answer: EventLoopPromise<Outcome>
    /// What the transport says of the change itself once it is committed (a member's KICK or
    /// MODE), before the change's events: the room reads the KICK, then whose turn it is now.
    let committed: (() -> Void)?

    init(reply: Reply, answer: EventLoopPromise<Outcome>, committed: (() -> Void)? = nil) {
        self.reply = reply
        self.answer = answer
        self.committed = committed
    }
}

/// A room's event line as IRC carries it: the sentence (times in the server's zone) and the
/// `chorus/…` tags, serialized as the history row keeps them.
struct IRCEventWording: EventWording {
    let timeZone: TimeZone
    let now: @Sendable () -> Date

    func roomLine(_ event: Event, roomName: String) -> RoomLineWords {
        words(event, roomName: roomName)
    }

    func directLine(_ event: Event, roomName: String?) -> RoomLineWords {
        words(event, roomName: roomName)
    }

    private func words(_ event: Event, roomName: String?) -> RoomLineWords {
        let text = sentence(event, roomName: roomName)
        let tags = EventText.tags(event, roomName: roomName)
        return RoomLineWords(text: text, tags: tags, serializedTags: Message.serializedTags(tags.map { Message.Tag($0.0, $0.1) }))
    }

    /// The sentence people read for `event`, its room called `roomName` (its key when nil), times
    /// in `zone` (the server's unless given): for the room line, a direct line, a queued event.
    func sentence(_ event: Event, roomName: String?, in zone: TimeZone? = nil) -> String {
        let room = event.room
        return EventText(when: When(timeZone: zone ?? timeZone), now: now(), roomName: { $0 == room ? roomName ?? $0 : $0 }).line(event)
    }
}
