import ChorusCore
import Foundation
import NIOCore

/// A node that dies without a word (`kill -9`, a cut cable) holds its users' nicks until its lease
/// lapses, while the balancer already sends those users, reconnecting, to another node. A
/// logged-in owner whose nick a session of their own account holds on another node is not told
/// 433 at once (their client would come back as `nick_`): their registration waits while that
/// node stays silent, and goes on with the nick once the others give the node up. A node that
/// renews its lease meanwhile is alive, and its session keeps the nick: 433 after at most about
/// one heartbeat, as for a second device of the account.
extension ClusterNode {
    /// The session of `client`'s own account on another node that holds `nick`, if that is who does.
    func ownSessionElsewhere(holding nick: String, for client: Client) -> PresenceRecord? {
        guard let account = client.account?.key, let holder = server.remote.user(nick: nick),
              let holding = holder.account, Account.key(holding) == account else { return nil }
        return holder
    }

    /// True once this node no longer sees `holder` (its node given up, or the session ended), false
    /// as soon as the holder's node renews its lease, or when neither happened within a lease and
    /// three heartbeats. A node silent past its lease is given up from here at once, rather than at
    /// this node's next heartbeat.
    func sessionGone(_ holder: PresenceRecord) -> EventLoopFuture<Bool> {
        let promise = server.loop.makePromise(of: Bool.self)
        let deadline = NIODeadline.now() + .milliseconds(Int64((presence.lease + 3 * presence.heartbeatInterval) * 1000))
        look(for: holder, since: nil, until: deadline, promise)
        return promise.futureResult
    }

    private func look(for holder: PresenceRecord, since first: Int64?, until deadline: NIODeadline, _ promise: EventLoopPromise<Bool>) {
        if server.remote.user(nick: holder.nick)?.connection != holder.connection { return promise.succeed(true) }
        if NIODeadline.now() > deadline { return promise.succeed(false) }
        let node = holder.node, presence = self.presence
        server.background { () -> Int64? in
            guard let beat = try presence.lastHeartbeat(of: node) else { return nil }
            if beat.silent > presence.lease { _ = try presence.withdrawSilentNodes() }
            return beat.at
        }.whenComplete { result in
            switch result {
            case .success(let beat?) where first != nil && beat != first:
                promise.succeed(false)  // renewed: the node lives, and so does its session
            case .success(let beat):
                // Still silent, or given up (nil): the feed brings the session's end here.
                self.server.loop.scheduleTask(in: Self.reclaimLook) {
                    self.look(for: holder, since: first ?? beat, until: deadline, promise)
                }
            case .failure(let error):
                self.server.logger.warning("cannot tell whether a node lives", metadata: ["node": "\(node)", "error": "\(error)"])
                promise.succeed(false)
            }
        }
    }

    /// How often a waiting owner's node looks again.
    static let reclaimLook = TimeAmount.milliseconds(250)
}
