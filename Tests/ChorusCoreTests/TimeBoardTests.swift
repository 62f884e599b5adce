import ChorusCore
import ChorusStore
import ChorusTestSupport
import Foundation
import XCTest

/// Tracked time: one timer, switching, no overlaps, nothing in the future, edits, modes, time on
/// jobs told to the room once, and reports summed by the store against totals worked out by hand.
final class TimeBoardTests: XCTestCase {
    var store: (any ChorusStorage)!
    var time: TimeBoard!
    var jobs: JobBoard!
    var clock = ISO8601DateFormatter().date(from: "2026-11-23T09:00:00Z")!

    final class ClockBox: @unchecked Sendable {
        weak var test: TimeBoardTests?
        init(_ test: TimeBoardTests) { self.test = test }
        var now: Date { test?.clock ?? Date() }
    }

    override func setUpWithError() throws {
        store = try TestStore.fresh()
        let box = ClockBox(self)
        jobs = JobBoard(store: store, now: { box.now })
        time = TimeBoard(store: store, jobs: jobs, now: { box.now })
        for name in ["ann", "ben"] { _ = try store.insertAccount(Account(name: name, passwordHash: "x", createdAt: clock)) }
        try store.saveRoom(Room(name: "#Flat", createdAt: clock))
        try store.saveMembership(Membership(room: "#flat", account: "ann", role: .manager, since: clock))
    }

    func at(_ iso: String) -> Date { ISO8601DateFormatter().date(from: iso)! }

    func assertRefused(_ expression: @autoclosure () throws -> Any, _ message: String, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertThrowsError(try expression(), file: file, line: line) {
            XCTAssertEqual(($0 as? JobError)?.description, message, file: file, line: line)
        }
    }

    func testOneTimerAtATimeAndStartingAgainStopsTheFirst() throws {
        let (study, none, _, _) = try time.start(.mode("Study"), note: "ch. 3", by: "ann")
        XCTAssertNil(none)
        XCTAssertEqual(study.mode, "study")
        clock = clock.addingTimeInterval(1800)
        let (work, stopped, replaced, events) = try time.start(.mode("work"), note: "", by: "ann")
        XCTAssertFalse(replaced)
        XCTAssertEqual(stopped?.id, study.id)
        XCTAssertEqual(stopped?.end, clock)
        XCTAssertEqual(try store.runningEntry(of: "ann")?.id, work.id, "one timer runs")
        XCTAssertEqual(events.map(\.type), [EventType.timeStopped, EventType.timeStarted])
        XCTAssertTrue(events.allSatisfy { $0.reach == .concerned && $0.concerns.isEmpty && $0.room == nil }, "personal time is nobody else's")
        assertRefused(try time.start(.mode("sleep"), note: "", by: "ann"), "Unknown mode sleep: !modes lists yours, !mode add sleep makes it")
        XCTAssertEqual(try store.runningEntry(of: "ann")?.id, work.id, "a refused start stops nothing")
    }

    func testStoppingNotInTheFutureNorBeforeTheStart() throws {
        _ = try time.start(.mode("work"), note: "", by: "ann")
        clock = clock.addingTimeInterval(3600)
        assertRefused(try time.stop(at: clock.addingTimeInterval(60), by: "ann"), "That is in the future: a timer stops now or earlier")
        assertRefused(try time.stop(at: clock.addingTimeInterval(-7200), by: "ann"), "The timer started at a later time than that")
        let (entry, kept, _) = try time.stop(at: clock.addingTimeInterval(-600), by: "ann")
        XCTAssertEqual(entry.duration(now: clock), 3000)
        XCTAssertTrue(kept)
        assertRefused(try time.stop(by: "ann"), "No timer is running. !track start <mode> starts one")
        assertRefused(try time.cancel(by: "ann"), "No timer is running")
    }

    /// A timer stopped under a minute after it started was a slip, as one a start replaces: no 0m entry.
    func testATimerStoppedUnderAMinuteIsNotKept() throws {
        let (slip, _, _, _) = try time.start(.mode("work"), note: "", by: "ann")
        clock = clock.addingTimeInterval(59)
        let (stopped, kept, events) = try time.stop(by: "ann")
        XCTAssertEqual(stopped.id, slip.id)
        XCTAssertFalse(kept)
        XCTAssertNil(try store.entry(slip.id), "the slip is gone")
        XCTAssertEqual(events.map(\.type), [EventType.timeCancelled])
        _ = try time.start(.mode("work"), note: "", by: "ann")
        clock = clock.addingTimeInterval(60)
        let (minute, keptMinute, _) = try time.stop(by: "ann")
        XCTAssertTrue(keptMinute)
        XCTAssertEqual(try store.entry(minute.id)?.duration(now: clock), 60)
    }

    func testEntriesNeverOverlapNorReachIntoTheFuture() throws {
        let (a, _) = try time.add(.mode("study"), from: at("2026-11-23T07:00:00Z"), to: at("2026-11-23T08:30:00Z"), note: "", by: "ann")
        assertRefused(try time.add(.mode("work"), from: at("2026-11-23T08:00:00Z"), to: at("2026-11-23T08:45:00Z"), note: "", by: "ann"),
                      "That overlaps entry \(a.id) (study)")
        assertRefused(try time.add(.mode("work"), from: at("2026-11-23T06:00:00Z"), to: at("2026-11-23T09:30:00Z"), note: "", by: "ann"),
                      "That is in the future: time is logged once it is spent")
        assertRefused(try time.add(.mode("work"), from: at("2026-11-23T06:00:00Z"), to: at("2026-11-23T05:00:00Z"), note: "", by: "ann"),
                      "An entry ends after it starts")
        // Touching is not overlapping; ben's time is his own.
        _ = try time.add(.mode("work"), from: at("2026-11-23T08:30:00Z"), to: at("2026-11-23T08:45:00Z"), note: "", by: "ann")
        _ = try time.add(.mode("work"), from: at("2026-11-23T07:00:00Z"), to: at("2026-11-23T08:00:00Z"), note: "", by: "ben")
        // A running timer counts as lasting until now.
        _ = try time.start(.mode("break"), note: "", by: "ann")
        clock = clock.addingTimeInterval(600)
        assertRefused(try time.add(.mode("work"), from: at("2026-11-23T09:05:00Z"), to: at("2026-11-23T09:08:00Z"), note: "", by: "ann"),
                      "That overlaps entry 4 (break)")
    }

    func testEditsKeepTheRulesAndOnlyTheOwnerMakesThem() throws {
        let (a, _) = try time.add(.mode("study"), from: at("2026-11-23T07:00:00Z"), to: at("2026-11-23T08:00:00Z"), note: "", by: "ann")
        let (b, _) = try time.add(.mode("work"), from: at("2026-11-23T08:00:00Z"), to: at("2026-11-23T08:30:00Z"), note: "", by: "ann")
        assertRefused(try time.edit(a.id, .end(at("2026-11-23T08:10:00Z")), by: "ann"), "That overlaps entry \(b.id) (work)")
        assertRefused(try time.edit(a.id, .start(at("2026-11-23T08:10:00Z")), by: "ann"), "An entry ends after it starts")
        assertRefused(try time.edit(a.id, .note("mine"), by: "ben"), "You have no entry \(a.id): !track log shows yours")
        let (edited, events) = try time.edit(a.id, .start(at("2026-11-23T06:30:00Z")), by: "ann")
        XCTAssertEqual(edited.duration(now: clock), 5400)
        XCTAssertEqual(events.map { $0.data["field"] }, ["start"])
        XCTAssertEqual(try time.edit(b.id, .target(.mode("break")), by: "ann").0.mode, "break")
        assertRefused(try time.remove(b.id, by: "ben"), "You have no entry \(b.id): !track log shows yours")
        _ = try time.remove(b.id, by: "ann")
        XCTAssertNil(try store.entry(b.id))
    }

    /// A switch within a minute of a start was a slip: the first entry is not kept as a 0m one.
    func testSwitchingRightAfterAStartKeepsNoEmptyEntry() throws {
        let (study, _, _, _) = try time.start(.mode("study"), note: "", by: "ann")
        clock = clock.addingTimeInterval(20)
        let (work, slipped, replaced, events) = try time.start(.mode("work"), note: "", by: "ann")
        XCTAssertTrue(replaced)
        XCTAssertEqual(slipped?.id, study.id)
        XCTAssertNil(try store.entry(study.id), "the slip is gone")
        XCTAssertEqual(events.map(\.type), [EventType.timeCancelled, EventType.timeStarted])
        XCTAssertEqual(try store.runningEntry(of: "ann")?.id, work.id)
    }

    func testTimeOnARoomsJobIsToldToTheRoomOnceItsEntryCloses() throws {
        let job = try XCTUnwrap(jobs.add(title: "Fix the sink", assignee: nil, in: "#flat", by: "ann").job)
        let (_, _, _, startEvents) = try time.start(.job(job.id), note: "", by: "ann")
        XCTAssertFalse(startEvents.contains { $0.type == EventType.timeLogged }, "not at every start")
        clock = clock.addingTimeInterval(5400)
        let (_, _, events) = try time.stop(by: "ann")
        let logged = try XCTUnwrap(events.first { $0.type == EventType.timeLogged })
        XCTAssertEqual(logged.room, "#flat")
        XCTAssertEqual(logged.job, job.id)
        XCTAssertEqual(logged.data["minutes"], "90")
        XCTAssertEqual(try time.seconds(onJob: job.id), 5400)
        XCTAssertFalse(try store.events(of: job.id, limit: 10).contains { $0.type == EventType.timeStarted },
                       "a job's activity shows time logged, not someone's starts")
        assertRefused(try time.start(.job(job.id), note: "", by: "ben"), "There is no job \(job.id) that you can see")
    }

    /// Time the room was told of, changed afterwards: the room hears the correction, or that it
    /// was taken back, and the job's total follows.
    func testChangingTimeAJobWasToldOfTellsTheRoomAgain() throws {
        let sink = try XCTUnwrap(jobs.add(title: "Fix the sink", assignee: nil, in: "#flat", by: "ann").job)
        let door = try XCTUnwrap(jobs.add(title: "Oil the door", assignee: nil, in: "#flat", by: "ann").job)
        let (entry, _) = try time.add(.job(sink.id), from: at("2026-11-23T07:00:00Z"), to: at("2026-11-23T08:30:00Z"), note: "", by: "ann")
        func told(_ events: [Event]) -> [String] {
            events.filter { $0.room != nil }.map { "\($0.type) job \($0.job!) \($0.data["minutes"]!) was \($0.data["previous"] ?? "-")" }
        }

        XCTAssertEqual(told(try time.edit(entry.id, .end(at("2026-11-23T08:00:00Z")), by: "ann").1), ["time.corrected job \(sink.id) 60 was 90"])
        XCTAssertEqual(try time.seconds(onJob: sink.id), 3600)
        XCTAssertEqual(told(try time.edit(entry.id, .note("washer"), by: "ann").1), [], "a note changes no time")
        XCTAssertEqual(told(try time.edit(entry.id, .target(.job(door.id)), by: "ann").1),
                       ["time.corrected job \(sink.id) 0 was 60", "time.logged job \(door.id) 60 was -"])
        XCTAssertEqual(try time.seconds(onJob: sink.id), 0)
        XCTAssertEqual(told(try time.edit(entry.id, .target(.mode("work")), by: "ann").1), ["time.corrected job \(door.id) 0 was 60"])
        XCTAssertEqual(told(try time.edit(entry.id, .target(.job(sink.id)), by: "ann").1), ["time.logged job \(sink.id) 60 was -"])
        XCTAssertEqual(told(try time.remove(entry.id, by: "ann").1), ["time.corrected job \(sink.id) 0 was 60"])
        XCTAssertEqual(try time.seconds(onJob: sink.id), 0)

        // A running timer's time was never told: moving it tells nobody.
        let (running, _, _, _) = try time.start(.job(sink.id), note: "", by: "ann")
        XCTAssertEqual(told(try time.edit(running.id, .target(.job(door.id)), by: "ann").1), [])
    }

    func testModesOfOnesOwn() throws {
        XCTAssertEqual(try time.addMode("Guitar", by: "ann"), "guitar")
        assertRefused(try time.addMode("guitar", by: "ann"), "You already have the mode guitar")
        assertRefused(try time.addMode("study", by: "ann"), "You already have the mode study")
        assertRefused(try time.addMode("42", by: "ann"), "“42” is not a mode name: letters, digits and hyphens, up to 24 characters")
        _ = try time.add(.mode("guitar"), from: at("2026-11-23T07:00:00Z"), to: at("2026-11-23T08:00:00Z"), note: "", by: "ann")
        assertRefused(try time.start(.mode("guitar"), note: "", by: "ben"), "Unknown mode guitar: !modes lists yours, !mode add guitar makes it")
        _ = try time.removeMode("guitar", by: "ann")
        XCTAssertEqual(try time.totals(of: "ann", from: at("2026-11-23T00:00:00Z"), to: at("2026-11-24T00:00:00Z"), by: .mode),
                       [TimeTotal(key: "guitar", seconds: 3600)], "its time stays")
    }

    /// Totals worked out by hand: entries cut to the range at both ends, a running timer counted
    /// until now, grouped by mode, job and room, largest first.
    func testReportsAreSummedByTheStoreAndCutToTheRange() throws {
        let job = try XCTUnwrap(jobs.add(title: "Fix the sink", assignee: nil, in: "#flat", by: "ann").job)
        // Sunday 22:00 to Monday 01:00: 1 h falls on Monday.
        _ = try time.add(.mode("study"), from: at("2026-11-22T22:00:00Z"), to: at("2026-11-23T01:00:00Z"), note: "", by: "ann")
        _ = try time.add(.job(job.id), from: at("2026-11-23T06:00:00Z"), to: at("2026-11-23T07:30:00Z"), note: "", by: "ann")
        _ = try time.add(.mode("study"), from: at("2026-11-23T07:30:00Z"), to: at("2026-11-23T08:00:00Z"), note: "", by: "ann")
        _ = try time.start(.mode("work"), note: "", by: "ann")  // 09:00
        clock = at("2026-11-23T09:20:00Z")
        let monday = (at("2026-11-23T00:00:00Z"), at("2026-11-24T00:00:00Z"))
        XCTAssertEqual(try time.totals(of: "ann", from: monday.0, to: monday.1, by: .mode),
                       [TimeTotal(key: "job", seconds: 5400), TimeTotal(key: "study", seconds: 5400), TimeTotal(key: "work", seconds: 1200)])
        XCTAssertEqual(try time.totals(of: "ann", from: monday.0, to: monday.1, by: .job),
                       [TimeTotal(key: "", seconds: 6600), TimeTotal(key: String(job.id), seconds: 5400)])
        XCTAssertEqual(try time.totals(of: "ann", from: monday.0, to: monday.1, by: .room),
                       [TimeTotal(key: "", seconds: 6600), TimeTotal(key: "#flat", seconds: 5400)])
        XCTAssertEqual(try time.totals(of: "ann", from: at("2026-11-22T00:00:00Z"), to: monday.0, by: .mode),
                       [TimeTotal(key: "study", seconds: 7200)], "Sunday keeps its 2 h")
        XCTAssertEqual(try time.totals(of: "ben", from: monday.0, to: monday.1, by: .mode), [])
        XCTAssertEqual(try time.entries(of: "ann", from: monday.0, to: monday.1).count, 4)
    }

    func testTheWeeklyPlanIsReadAndCountedDayByDay() throws {
        XCTAssertEqual(TimeRules.days("mon-fri"), [2, 3, 4, 5, 6])
        XCTAssertEqual(TimeRules.days("sat,sun"), [7, 1])
        XCTAssertEqual(TimeRules.days("Weekends"), [1, 7])
        XCTAssertEqual(TimeRules.days("mon,wed-thu"), [2, 4, 5])
        XCTAssertNil(TimeRules.days("fri-mon"), "a range runs forward within the week")
        XCTAssertNil(TimeRules.days("someday"))
        XCTAssertEqual(TimeRules.daysText([2, 3, 4, 5, 6]), "mon-fri")
        XCTAssertEqual(TimeRules.daysText([7, 1]), "sat,sun")

        let study = try time.addPlan("study", days: [2, 3, 4, 5, 6], from: 9 * 60, to: 12 * 60, by: "ann")
        assertRefused(try time.addPlan("work", days: [2], from: 11 * 60, to: 13 * 60, by: "ann"), "That overlaps block \(study.id) (study mon-fri)")
        assertRefused(try time.addPlan("work", days: [2], from: 13 * 60, to: 12 * 60, by: "ann"), "A block ends after it starts, the same day")
        assertRefused(try time.addPlan("nap", days: [2], from: 13 * 60, to: 14 * 60, by: "ann"), "Unknown mode nap: !modes lists yours, !mode add nap makes it")
        _ = try time.addPlan("exercise", days: [7, 1], from: 8 * 60, to: 9 * 60, by: "ann")
        assertRefused(try time.removePlan(study.id, by: "ben"), "You have no block \(study.id) in your plan: !plan lists them")

        var paris = Calendar(identifier: .gregorian)
        paris.timeZone = TimeZone(identifier: "Europe/Paris")!
        // The week of the clocks going back (Mon 19 to Sun 25 Oct 2026, Paris): 15 h of study and
        // 2 h of exercise at their clock times, whatever the day's length.
        let week = try time.planned(of: "ann", from: at("2026-10-18T22:00:00Z"), to: at("2026-10-25T23:00:00Z"), calendar: paris)
        XCTAssertEqual(week, [TimeTotal(key: "study", seconds: 15 * 3600), TimeTotal(key: "exercise", seconds: 2 * 3600)])
        // Wednesday 10:30 in Paris: two and a half days of study so far.
        let soFar = try time.planned(of: "ann", from: at("2026-10-18T22:00:00Z"), to: at("2026-10-21T08:30:00Z"), calendar: paris)
        XCTAssertEqual(soFar, [TimeTotal(key: "study", seconds: 7 * 3600 + 1800)])
    }

    func testARoomsReportShowsAManagerEveryoneAndAMemberThemselves() throws {
        try store.saveMembership(Membership(room: "#flat", account: "ben", role: .member, since: clock))
        let job = try XCTUnwrap(jobs.add(title: "Fix the sink", assignee: nil, in: "#flat", by: "ann").job)
        _ = try time.add(.job(job.id), from: at("2026-11-23T06:00:00Z"), to: at("2026-11-23T07:00:00Z"), note: "", by: "ann")
        _ = try time.add(.job(job.id), from: at("2026-11-23T07:00:00Z"), to: at("2026-11-23T07:30:00Z"), note: "", by: "ben")
        _ = try time.add(.mode("study"), from: at("2026-11-23T08:00:00Z"), to: at("2026-11-23T08:30:00Z"), note: "", by: "ben")
        let day = (at("2026-11-23T00:00:00Z"), at("2026-11-24T00:00:00Z"))
        XCTAssertEqual(try time.roomTotals("#flat", from: day.0, to: day.1, by: .person, by: "ann"),
                       [TimeTotal(key: "ann", seconds: 3600), TimeTotal(key: "ben", seconds: 1800)], "the manager sees everyone")
        XCTAssertEqual(try time.roomTotals("#flat", from: day.0, to: day.1, by: .person, by: "ben"),
                       [TimeTotal(key: "ben", seconds: 1800)], "a member sees their own, and not their study")
        XCTAssertEqual(try time.roomTotals("#flat", from: day.0, to: day.1, by: .job, by: "ann"), [TimeTotal(key: String(job.id), seconds: 5400)])
        _ = try store.insertAccount(Account(name: "cy", passwordHash: "x", createdAt: clock))
        assertRefused(try time.roomTotals("#flat", from: day.0, to: day.1, by: .person, by: "cy"), "You are not a member of #Flat")
    }
}
