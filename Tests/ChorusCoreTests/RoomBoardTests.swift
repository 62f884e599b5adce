import ChorusCore
import ChorusStore
import ChorusTestSupport
import Foundation
import XCTest

/// Belonging to a room: who adds whom, and what leaving does to the work someone held there.
final class RoomBoardTests: XCTestCase {
    var store: (any ChorusStorage)!
    var rooms: RoomBoard!
    var jobs: JobBoard!
    var chores: ChoreBoard!
    let t0 = ISO8601DateFormatter().date(from: "2026-11-23T09:00:00Z")!

    override func setUpWithError() throws {
        store = try TestStore.fresh()
        let t0 = self.t0
        jobs = JobBoard(store: store, now: { t0 })
        chores = ChoreBoard(store: store, timeZone: TimeZone(identifier: "UTC")!, now: { t0 })
        rooms = RoomBoard(store: store, jobs: jobs, chores: chores, now: { t0 })
        for name in ["ann", "ben", "cat", "dan"] { _ = try store.insertAccount(Account(name: name, passwordHash: "x", createdAt: t0)) }
        try store.saveRoom(Room(name: "#Flat", createdAt: t0))
        try store.saveMembership(Membership(room: "#flat", account: "ann", role: .manager, since: t0))
        try store.saveMembership(Membership(room: "#flat", account: "ben", role: .member, since: t0))
        try store.saveMembership(Membership(room: "#flat", account: "cat", role: .member, since: t0))
    }

    func testAManagerAddsAnAccountThatIsNotConnected() throws {
        XCTAssertThrowsError(try rooms.add("dan", to: "#flat", by: "ben")) {
            XCTAssertEqual($0 as? JobError, .notAllowed("Only the room's managers add people to it"))
        }
        XCTAssertThrowsError(try rooms.add("nobody", to: "#flat", by: "ann")) {
            XCTAssertEqual($0 as? JobError, .invalid("nobody is not a registered account"))
        }
        let (membership, event) = try rooms.add("DAN", to: "#flat", by: "ann")
        XCTAssertEqual(membership.account, "dan")
        XCTAssertEqual(membership.role, .member)
        XCTAssertEqual(event.type, EventType.memberAdded)
        XCTAssertEqual(event.concerns, ["dan"], "dan is told")
        XCTAssertEqual(try store.role(of: "dan", in: "#flat"), .member)
        XCTAssertThrowsError(try rooms.add("dan", to: "#flat", by: "ann")) {
            XCTAssertEqual($0 as? JobError, .invalid("dan is already a member of #Flat"))
        }
    }

    /// JOIN makes a logged-in newcomer a member; who manages a room nobody manages is decided here,
    /// once, so two arriving together cannot both become its manager.
    func testArrivingMakesAMemberAndTheFirstComerManagesARoomNobodyManages() throws {
        XCTAssertEqual(try rooms.arrive("dan", in: "#flat", firstComer: true).role, .member, "#Flat has a manager")
        XCTAssertEqual(try store.role(of: "dan", in: "#flat"), .member)
        XCTAssertEqual(try rooms.arrive("ann", in: "#flat", firstComer: false).role, .manager, "a member stays as they are")

        try store.saveRoom(Room(name: "#new", createdAt: t0))
        XCTAssertEqual(try rooms.arrive("ben", in: "#new", firstComer: false).role, .member, "not first: a member")
        XCTAssertEqual(try rooms.arrive("cat", in: "#new", firstComer: true, voiced: true).role, .manager)
        XCTAssertEqual(try rooms.arrive("dan", in: "#new", firstComer: true).role, .member, "the room has its manager now")
        XCTAssertEqual(try store.memberships(ofAccount: "cat").first { $0.room == "#new" }?.voiced, true)
        XCTAssertThrowsError(try rooms.arrive("dan", in: "#nowhere", firstComer: true)) {
            XCTAssertEqual($0 as? JobError, .invalid("There is no room #nowhere"))
        }
    }

    /// Leaving used to leave the chore stuck on the leaver, who went on being reminded, and their
    /// jobs assigned to them.
    func testLeavingPassesTurnsOnAndReleasesJobs() throws {
        _ = try chores.add(name: "dishes", frequency: .days(1), hour: 20, minute: 0, from: nil, among: ["ben", "cat", "ann"],
                           in: "#flat", by: "ann")
        _ = try chores.add(name: "bins", frequency: .weeks(1), hour: 8, minute: 0, from: nil, among: ["cat", "ben"],
                           in: "#flat", by: "ann")
        let sink = try jobs.add(title: "Fix the sink", assignee: "ben", in: "#flat", by: "ann").job!
        let started = try jobs.add(title: "Paint", assignee: "ben", in: "#flat", by: "ann").job!
        _ = try jobs.move(started.id, to: .inProgress, by: "ben")
        let done = try jobs.add(title: "Old", assignee: "ben", in: "#flat", by: "ann").job!
        _ = try jobs.move(done.id, to: .completed, by: "ben")
        let cats = try jobs.add(title: "Cat's", assignee: "cat", in: "#flat", by: "ann").job!

        let events = try rooms.leave("ben", room: "#flat", by: "ben")
        XCTAssertNil(try store.role(of: "ben", in: "#flat"), "no longer a member")

        let dishes = try XCTUnwrap(store.chore(named: "dishes", in: "#flat"))
        XCTAssertEqual(dishes.rotation, ["cat", "ann"])
        XCTAssertEqual(dishes.whoseTurn, "cat", "ben's turn passed to the next person")
        let bins = try XCTUnwrap(store.chore(named: "bins", in: "#flat"))
        XCTAssertEqual(bins.rotation, ["cat"])
        XCTAssertEqual(bins.whoseTurn, "cat", "cat's turn stays cat's")

        XCTAssertEqual(try store.job(sink.id)?.status, .created)
        XCTAssertNil(try store.job(sink.id)?.assignee)
        XCTAssertEqual(try store.job(started.id)?.status, .created, "in progress too")
        XCTAssertEqual(try store.job(done.id)?.assignee, "ben", "finished work keeps who did it")
        XCTAssertEqual(try store.job(cats.id)?.assignee, "cat")

        XCTAssertEqual(events.map(\.type), [EventType.choreLeft, EventType.turnStarted, EventType.choreLeft,
                                            EventType.jobUnassigned, EventType.jobUnassigned])
        XCTAssertEqual(events[1].concerns, ["cat"], "the new turn's person is told")
        XCTAssertEqual(events[3].data["reason"], "ben left #Flat")
        XCTAssertTrue(events.allSatisfy { $0.id > 0 }, "stored")

        XCTAssertEqual(try rooms.leave("ben", room: "#flat", by: "ben"), [], "leaving twice changes nothing")
        let kicked = try rooms.leave("cat", room: "#flat", by: "ann")
        XCTAssertEqual(kicked.last?.data["reason"], "cat was removed from #Flat")
        XCTAssertEqual(try store.chore(named: "bins", in: "#flat")?.rotation, [], "nobody is left to take bins")
    }

    func testOnlyAManagerClosesTheRoomAndTheGateSaysWhy() throws {
        XCTAssertThrowsError(try rooms.require(.member, of: "dan", in: "#flat", for: "!jobs")) {
            XCTAssertEqual($0 as? JobError, .notInRoom("#Flat"))
        }
        XCTAssertEqual(try rooms.require(.member, of: "ben", in: "#flat", for: "!jobs"), .member)
        XCTAssertThrowsError(try rooms.require(.manager, of: "ben", in: "#flat", for: "!assign")) {
            XCTAssertEqual($0 as? JobError, .notAllowed("!assign is for the room's managers"))
        }
        XCTAssertThrowsError(try rooms.close("#flat", by: "ben")) {
            XCTAssertEqual($0 as? JobError, .notAllowed("Only the room's managers can close it"))
        }
        _ = try jobs.add(title: "Fix the sink", in: "#flat", by: "ann")
        try rooms.close("#flat", by: "ann")
        XCTAssertNil(try store.roomName("#flat"))
        XCTAssertNil(try store.role(of: "ann", in: "#flat"))
        XCTAssertNil(try store.job(1), "its jobs go with it")
    }

    /// MODE +o and -o remember the role by the room's rules, with an event for a change of role only.
    func testRolesChangeByTheRoomsRules() throws {
        XCTAssertThrowsError(try rooms.setRole("cat", in: "#flat", to: .manager, voiced: false, by: "ben")) {
            XCTAssertEqual($0 as? JobError, .notAllowed("Only the room's managers change roles"))
        }
        XCTAssertThrowsError(try rooms.setRole("cat", in: "#flat", to: .manager, voiced: false, by: nil),
                             "an operator without an account cannot give roles in a room an account manages")
        let (made, event) = try rooms.setRole("cat", in: "#flat", to: .manager, voiced: false, by: "ann")
        XCTAssertEqual(made.role, .manager)
        XCTAssertEqual(event?.type, EventType.memberRole)
        XCTAssertEqual(event?.data["role"], "manager")
        XCTAssertEqual(event?.concerns, ["cat"])
        XCTAssertEqual(try store.role(of: "cat", in: "#flat"), .manager)
        let (voiced, none) = try rooms.setRole("cat", in: "#flat", to: .manager, voiced: true, by: "ann")
        XCTAssertTrue(voiced.voiced)
        XCTAssertNil(none, "only the voice changed")

        // In a room no account manages, whoever runs it may give roles.
        try store.saveRoom(Room(name: "#open", createdAt: t0))
        try store.saveMembership(Membership(room: "#open", account: "ben", role: .member, since: t0))
        XCTAssertEqual(try rooms.setRole("ben", in: "#open", to: .manager, voiced: false, by: nil).0.role, .manager)
    }
}
