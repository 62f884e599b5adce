import ChorusCore
import Foundation
import NIOCore

/// Accounts deleted while the server runs (`chorusd account del`, another process): their
/// sessions end, their tokens stop opening the API, and they leave the rooms as the store says.
extension IRCServer {
    /// How often the store is asked: a deleted person's session lasts at most this long.
    static let deletionCheck: TimeAmount = .seconds(5)

    func watchForDeletedAccounts() -> RepeatedTask {
        // Another process's clock may run behind this one's: a minute of overlap, and each
        // deletion carried out once.
        var checked = Date()
        var ended: Set<String> = []
        return loop.scheduleRepeatedTask(initialDelay: Self.deletionCheck, delay: Self.deletionCheck) { [weak self] _ in
            guard let self else { return }
            let since = checked.addingTimeInterval(-60)
            let asked = Date()
            self.background { try self.store.accountsDeleted(after: since) }.whenSuccess { keys in
                checked = asked
                for key in keys where !ended.contains(key) {
                    ended.insert(key)
                    self.endDeletedAccount(key)
                }
            }
        }
    }

    private func endDeletedAccount(_ key: String) {
        accountKeys.remove(key)
        readMarkers[key] = nil
        web.api.forgetTokens()
        for room in rooms.values where room.memberships.removeValue(forKey: key) != nil { room.noteChangedHere() }
        let sessions = registry.connections(ofAccount: key)
        for client in sessions { disconnect(client, reason: "Account deleted") }
        logger.info("account deleted: its sessions ended", metadata: ["account": "\(key)", "sessions": "\(sessions.count)"])
    }
}
