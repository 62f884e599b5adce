import ChorusCore
import ChorusStore
import ChorusTestSupport
import Foundation
import XCTest

/// The job rules against a real (in-memory) SQLite store: permissions, the status machine,
/// visibility, and that each change writes its events.
final class JobBoardTests: XCTestCase {
    var store: (any ChorusStorage)!
    var board: JobBoard!
    let t0 = Date(timeIntervalSince1970: 1_800_000_000)

    override func setUpWithError() throws {
        store = try TestStore.fresh()
        let t0 = self.t0
        board = JobBoard(store: store, now: { t0 })
        for name in ["mona", "mel", "max", "outsider"] {
            _ = try store.insertAccount(Account(name: name, passwordHash: "x", createdAt: t0))
        }
        try store.saveRoom(Room(name: "#shop", createdAt: t0))
        try store.saveRoom(Room(name: "#other", createdAt: t0))
        try store.saveMembership(Membership(room: "#shop", account: "mona", role: .manager, since: t0))
        try store.saveMembership(Membership(room: "#shop", account: "mel", role: .member, since: t0))
        try store.saveMembership(Membership(room: "#shop", account: "max", role: .member, since: t0))
        try store.saveMembership(Membership(room: "#other", account: "outsider", role: .manager, since: t0))
    }

    /// A command's first read: the asker's time zone, and in the same statement their role in the
    /// room, which the checks after it then find in the transaction's cache.
    func testATimeZoneReadWithTheRoleKeepsTheRoleForTheChecksThatFollow() throws {
        try store.setTimeZone("Europe/Paris", of: "mona")
        let cache = StoreCache()
        try store.transaction(cache: cache) { tx in
            XCTAssertEqual(try tx.timeZone(of: "Mona", readingRoleIn: "#SHOP"), "Europe/Paris")
            XCTAssertEqual(cache.with { $0.roles[StoreCache.Entries.roleKey("mona", "#shop")] }, .some(.manager))
            XCTAssertNil(try tx.timeZone(of: "mel", readingRoleIn: "#shop"), "no zone of her own")
            XCTAssertEqual(cache.with { $0.roles[StoreCache.Entries.roleKey("mel", "#shop")] }, .some(.member))
            XCTAssertNil(try tx.timeZone(of: "max", readingRoleIn: "#other"))
            XCTAssertEqual(cache.with { $0.roles[StoreCache.Entries.roleKey("max", "#other")] }, .some(nil), "not a member there, kept too")
            XCTAssertNil(try tx.role(of: "max", in: "#other"))
            // Once the zone is known, a read for another room reads no role.
            XCTAssertEqual(try tx.timeZone(of: "mona", readingRoleIn: "#other"), "Europe/Paris")
            XCTAssertNil(cache.with { $0.roles[StoreCache.Entries.roleKey("mona", "#other")] })
            XCTAssertEqual(try tx.role(of: "mona", in: "#other"), nil)
            XCTAssertNil(try tx.timeZone(of: "outsider", readingRoleIn: nil), "no room: the zone alone")
            XCTAssertNil(cache.with { $0.roles[StoreCache.Entries.roleKey("outsider", "#other")] })
        }
        XCTAssertEqual(try store.timeZone(of: "mona", readingRoleIn: "#shop"), "Europe/Paris", "outside a transaction: no cache")
    }

    func testLifecycleAndStatusMachine() throws {
        let created = try board.add(title: "Restock shelves", in: "#shop", by: "mona")
        let id = created.job!.id
        XCTAssertEqual(created.job?.status, .created)
        XCTAssertEqual(created.events.map(\.type), [EventType.jobCreated])

        XCTAssertEqual(try board.assign(id, to: "mel", by: "mona").job?.status, .assigned)
        XCTAssertThrowsError(try board.move(id, to: .inProgress, by: "max")) { XCTAssertTrue("\($0)".contains("assigned to mel")) }
        XCTAssertEqual(try board.move(id, to: .inProgress, by: "mel").job?.status, .inProgress)
        let done = try board.move(id, to: .completed, by: "mel")
        XCTAssertEqual(done.job?.status, .completed)
        XCTAssertEqual(done.events[0].concerns, ["mona"], "the creator is told of completion")
        XCTAssertThrowsError(try board.move(id, to: .completed, by: "mel")) {
            XCTAssertEqual($0 as? JobError, .illegalMove(id, from: .completed, to: .completed, why: "it is already completed"))
        }
        XCTAssertThrowsError(try board.move(id, to: .cancelled, by: "mona"))
        XCTAssertEqual(try board.move(id, to: .assigned, by: "mona").job?.status, .assigned, "reopen keeps the assignee")
        XCTAssertEqual(try board.move(id, to: .cancelled, reason: "no stock", by: "mona").events[0].data["reason"], "no stock")
        XCTAssertThrowsError(try board.assign(id, to: "max", by: "mona"), "a cancelled job is not reassigned")

        let log = try board.activity(id, by: "mona")
        XCTAssertEqual(log.count, 6)
        XCTAssertEqual(log.first?.data["to"], "cancelled", "newest first")
    }

    /// Cancelling is a manager's decision: the assignee cannot undo it, though they may reopen what they completed.
    /// A due time already past is refused, on a new job and in an edit; now or later is fine.
    func testADueTimeInThePastIsRefused() throws {
        let past = JobError.invalid("That due time has already passed: give a later one (tomorrow 17:00, fri, in 3d)")
        XCTAssertThrowsError(try board.add(title: "Water plants", due: t0.addingTimeInterval(-3600), in: "#shop", by: "mona")) {
            XCTAssertEqual($0 as? JobError, past)
        }
        let job = try XCTUnwrap(board.add(title: "Water plants", due: t0.addingTimeInterval(3600), in: "#shop", by: "mona").job)
        XCTAssertThrowsError(try board.edit(job.id, due: .some(t0), by: "mona")) { XCTAssertEqual($0 as? JobError, past) }
        XCTAssertNoThrow(try board.edit(job.id, due: .some(nil), by: "mona"), "clearing it is fine")
    }

    func testOnlyAManagerReopensACancelledJob() throws {
        let id = try board.add(title: "Paint the door", assignee: "mel", in: "#shop", by: "mona").job!.id
        _ = try board.move(id, to: .completed, by: "mel")
        XCTAssertEqual(try board.move(id, to: .assigned, by: "mel").job?.status, .assigned, "the assignee reopens their own work")
        _ = try board.move(id, to: .cancelled, reason: "no paint", by: "mona")
        XCTAssertThrowsError(try board.move(id, to: .assigned, by: "mel")) {
            XCTAssertEqual($0 as? JobError, .notAllowed("Job \(id) was cancelled by a manager; only a manager can reopen it"))
        }
        XCTAssertEqual(try store.job(id)?.status, .cancelled)
        XCTAssertEqual(try board.move(id, to: .assigned, by: "mona").job?.status, .assigned)
    }

    func testPermissions() throws {
        let id = try board.add(title: "Count till", in: "#shop", by: "mona").job!.id
        XCTAssertThrowsError(try board.assign(id, to: "mel", by: "max")) { XCTAssertEqual($0 as? JobError, .notAllowed("Only managers assign jobs")) }
        XCTAssertThrowsError(try board.move(id, to: .cancelled, by: "mel"))
        XCTAssertThrowsError(try board.assign(id, to: "outsider", by: "mona")) {
            XCTAssertEqual($0 as? JobError, .notAMember("outsider", room: "#shop"))
        }
        // Outsiders cannot see or touch the job, and are not told it exists.
        XCTAssertThrowsError(try board.job(id, by: "outsider")) { XCTAssertEqual($0 as? JobError, .noSuchJob(id)) }
        XCTAssertThrowsError(try board.comment(id, text: "hi", by: "outsider")) { XCTAssertEqual($0 as? JobError, .noSuchJob(id)) }
        XCTAssertThrowsError(try board.list(in: "#shop", filter: JobFilter(), by: "outsider"))
        // A member may create, but not for someone else; managers-only rooms refuse members.
        XCTAssertNoThrow(try board.add(title: "Mine", assignee: "mel", in: "#shop", by: "mel"))
        XCTAssertThrowsError(try board.add(title: "Yours", assignee: "max", in: "#shop", by: "mel"))
        _ = try board.updateSettings(of: "#shop", by: "mona") { $0.creators = .managers; return "creators managers" }
        XCTAssertThrowsError(try board.add(title: "Nope", in: "#shop", by: "mel"))
        XCTAssertThrowsError(try board.updateSettings(of: "#shop", by: "mel") { _ in "x" })
    }

    func testOwnVisibilityHidesOtherPeoplesJobs() throws {
        let forMel = try board.add(title: "Mel's job", assignee: "mel", in: "#shop", by: "mona").job!.id
        let forMax = try board.add(title: "Max's job", assignee: "max", in: "#shop", by: "mona").job!.id
        _ = try board.updateSettings(of: "#shop", by: "mona") { $0.visibility = .own; return "visibility own" }

        XCTAssertEqual(try board.list(in: "#shop", filter: JobFilter(), by: "mel").jobs.map(\.id), [forMel])
        XCTAssertEqual(try board.list(in: "#shop", filter: JobFilter(), by: "mona").jobs.map(\.id), [forMax, forMel])
        XCTAssertThrowsError(try board.job(forMax, by: "mel")) { XCTAssertEqual($0 as? JobError, .noSuchJob(forMax)) }
        XCTAssertThrowsError(try board.activity(forMax, by: "mel"))
        // Events of Max's job are addressed to managers and Max only.
        let change = try board.move(forMax, to: .inProgress, by: "max")
        XCTAssertEqual(change.events[0].audience.map(Set.init), ["mona", "max"])
    }

    func testChecklistCommentsPhotosAndFilters() throws {
        let id = try board.add(title: "Inventory", assignee: "mel", due: t0.addingTimeInterval(3600), tasks: ["aisle 1"],
                               in: "#shop", by: "mona").job!.id
        _ = try board.addTask(id, text: "aisle 2", by: "mel")
        let ticked = try board.completeTask(id, number: 2, by: "mel")
        XCTAssertEqual(ticked.events[0].data["progress"], "1/2")
        XCTAssertThrowsError(try board.completeTask(id, number: 3, by: "mel")) { XCTAssertEqual($0 as? JobError, .noSuchTask(id, 3)) }
        XCTAssertThrowsError(try board.completeTask(id, number: 2, by: "mel"))
        _ = try board.comment(id, text: "first", by: "mona")
        _ = try board.comment(id, text: "second", by: "mel")
        XCTAssertEqual(try board.comments(id, by: "max").map(\.text), ["second", "first"])
        XCTAssertThrowsError(try board.addPhoto(id, url: "not a url", caption: "", by: "mel"))
        XCTAssertEqual(try board.addPhoto(id, url: "https://x.example/p.jpg", caption: "done", by: "mel").job?.photos.count, 1)

        var filter = JobFilter()
        filter.text = "invent"
        XCTAssertEqual(try board.list(in: "#shop", filter: filter, by: "max").total, 1)
        filter.text = "100%"
        XCTAssertEqual(try board.list(in: "#shop", filter: filter, by: "max").total, 0, "% is matched literally")
        filter = JobFilter()
        filter.dueTo = t0
        XCTAssertEqual(try board.list(in: "#shop", filter: filter, by: "max").total, 0)
        filter.dueTo = t0.addingTimeInterval(7200)
        XCTAssertEqual(try board.list(in: "#shop", filter: filter, by: "max").total, 1)
    }

    func testPersonalJobsAndAsks() throws {
        let personal = try board.add(title: "Dentist", in: nil, by: "max").job!
        XCTAssertNil(personal.room)
        XCTAssertThrowsError(try board.job(personal.id, by: "mona"), "nobody else sees a personal job")
        XCTAssertEqual(try board.mine("max", rooms: ["#shop"]).map(\.id), [personal.id])

        let id = try board.add(title: "Night shift", assignee: "mel", in: "#shop", by: "mona").job!.id
        XCTAssertThrowsError(try board.ask(.reassign, job: id, reason: "", in: "#shop", by: "max"))
        let (ask, event) = try board.ask(.reassign, job: id, reason: "exams", in: "#shop", by: "mel")
        XCTAssertEqual(event.data["ask"], String(ask.id))
        XCTAssertThrowsError(try board.decide(ask.id, approve: true, note: "", by: "mel"))
        // A successor is checked before the ask is answered: it stays open.
        XCTAssertThrowsError(try board.decide(ask.id, approve: true, note: "", handOverTo: "outsider", by: "mona")) {
            XCTAssertEqual("\($0)", JobError.notAMember("outsider", room: "#shop").description)
        }
        XCTAssertEqual(try store.ask(ask.id)?.state, .open)
        let (work, _) = try board.ask(.work, job: nil, reason: "", in: "#shop", by: "mel")
        XCTAssertThrowsError(try board.decide(work.id, approve: true, note: "", handOverTo: "mel", by: "mona")) {
            XCTAssertEqual("\($0)", "@nick names who takes over a job; ask \(work.id) is not a reassignment")
        }
        XCTAssertEqual(try store.ask(work.id)?.state, .open)
        XCTAssertEqual(try board.openAsks(in: "#shop", by: "max").count, 0, "members see only their own asks")
        let (decided, _) = try board.decide(ask.id, approve: false, note: "sorry", by: "mona")
        XCTAssertEqual(decided.state, .denied)
        XCTAssertThrowsError(try board.decide(ask.id, approve: true, note: "", by: "mona"), "an ask is answered once")
    }

    func testEventsAndQueueSurviveInTheStore() throws {
        let id = try board.add(title: "Label prices", assignee: "mel", in: "#shop", by: "mona").job!.id
        let event = try board.move(id, to: .inProgress, by: "mel").events[0]
        try store.queueEvent(event.id, for: ["mona"])
        XCTAssertEqual(try store.takeQueuedEvents(for: "MONA").map(\.id), [event.id])
        XCTAssertEqual(try store.takeQueuedEvents(for: "mona"), [], "queued events are delivered once")
    }
}
