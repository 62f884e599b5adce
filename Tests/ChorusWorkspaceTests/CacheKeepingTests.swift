import ChorusCore
import ChorusTestSupport
import ChorusWorkspace
import Foundation
import Synchronization
import XCTest

/// What of its cache a Workspace keeps from one transaction to the next when other processes
/// write its database (`CacheKeeping`). Runs in the PostgreSQL pass.
final class CacheKeepingTests: XCTestCase {
    /// A Workspace that shares its database keeps roles, room settings and time zones between its
    /// transactions until it is told another process changed them; jobs it reads again each time.
    func testASharedWorkspaceKeepsWhatItReadUntilToldAnotherProcessChangedIt() throws {
        try XCTSkipUnless(TestStore.onPostgres, "one SQLite file has one process writing it")
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("chorus-ck-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let store = try TestStore.at(folder: folder), otherNode = try TestStore.at(folder: folder)
        defer { store.close(); otherNode.close(); try? FileManager.default.removeItem(atPath: folder) }
        let t0 = Date(timeIntervalSince1970: 1_790_000_000)
        for name in ["ann", "ben"] { _ = try store.insertAccount(Account(name: name, passwordHash: "x", createdAt: t0)) }
        try store.saveRoom(Room(name: "#flat", createdAt: t0))
        try store.saveMembership(Membership(room: "#flat", account: "ben", role: .member, since: t0))
        let shared = Workspace(store: store, settings: .init(timeZone: TimeZone(identifier: "UTC")!, reminderInterval: 3600,
                                                             serviceNick: "Chorus", serviceSource: "Chorus!bot@test"),
                               wording: WorkspaceTests.Words(), sharedWithOthers: true, now: { t0 })
        defer { shared.waitUntilWritten() }
        _ = try store.insertJob(Job(room: "#flat", title: "Sink", creator: "ann", createdAt: t0),
                                event: Event(type: "test", room: "#flat", job: nil, actor: "ann", at: t0))
        struct Seen: Equatable { var role: Role?, zone: String?, title: String? }
        func look() -> Seen {
            let seen = Mutex<Seen?>(nil), done = DispatchSemaphore(value: 0)
            shared.run(WorkspaceTests.Change { boards in
                let now = Seen(role: try boards.store.role(of: "ben", in: "#flat"), zone: try boards.store.timeZone(of: "ben"),
                               title: try boards.store.job(1)?.title)
                seen.withLock { $0 = now }
                return Outcome()
            }) { _ in done.signal() }
            done.wait()
            return seen.withLock { $0! }
        }
        XCTAssertEqual(look(), Seen(role: .member, zone: nil, title: "Sink"))
        try otherNode.saveMembership(Membership(room: "#flat", account: "ben", role: .manager, since: t0))
        try otherNode.setTimeZone("Asia/Tokyo", of: "ben")
        var job = try XCTUnwrap(try otherNode.job(1))
        job.title = "Sink and tap"
        _ = try otherNode.updateJob(job, events: [])
        XCTAssertEqual(look(), Seen(role: .member, zone: nil, title: "Sink and tap"), "kept, but for the job")
        shared.roomsChangedOutside()
        XCTAssertEqual(look(), Seen(role: .manager, zone: "Asia/Tokyo", title: "Sink and tap"), "read again once told")
        try otherNode.setTimeZone(nil, of: "ben")
        Thread.sleep(forTimeInterval: 0.6)
        XCTAssertEqual(look().zone, nil, "and read again after half a second whatever it is told")
    }
}
