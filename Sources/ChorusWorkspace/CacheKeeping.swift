import ChorusCore
import Synchronization

/// What of the Workspace's cache (`StoreCache`) a transaction may start with. Alone on its database,
/// everything: every write goes through the Workspace, which keeps the cache true. When other
/// processes write the same database (`SharedLog`), what this one read in an earlier transaction
/// may have changed since. Jobs are read again in each transaction. Rooms, roles, room settings and
/// time zones are kept until something outside the Workspace changes one of them
/// (`changedOutside`: another process's commit wakes this one, or this one made a room through the
/// shared log), and at most `keptWhileShared` in any case: a wake-up lost while the listening
/// connection was away costs no more than that.
final class CacheKeeping: Sendable {
    private let sharedWithOthers: Bool
    private let changed = Atomic<Bool>(true)
    private let keptSince = Mutex<ContinuousClock.Instant>(.now)
    static let keptWhileShared: Duration = .milliseconds(500)

    init(sharedWithOthers: Bool) {
        self.sharedWithOthers = sharedWithOthers
    }

    func changedOutside() {
        changed.store(true, ordering: .sequentiallyConsistent)
    }

    /// Forgets what the next transaction must read again (on the writer, before it begins).
    func prepare(_ cache: StoreCache) {
        guard sharedWithOthers else { return }
        let now = ContinuousClock.Instant.now
        let expired = keptSince.withLock { now - $0 > Self.keptWhileShared }
        if changed.exchange(false, ordering: .sequentiallyConsistent) || expired {
            cache.forgetAll()
            keptSince.withLock { $0 = now }
        } else {
            cache.forgetJobs()
        }
    }
}
