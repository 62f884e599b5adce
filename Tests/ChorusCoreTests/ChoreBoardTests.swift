import ChorusCore
import ChorusStore
import ChorusTestSupport
import Foundation
import XCTest

/// Rotations, covering, skipping and the calendar of chores, on a clock the test moves.
final class ChoreBoardTests: XCTestCase {
    var store: (any ChorusStorage)!
    var clock = Clock()
    var board: ChoreBoard!
    let paris = TimeZone(identifier: "Europe/Paris")!

    final class Clock: @unchecked Sendable {
        var now = ISO8601DateFormatter().date(from: "2026-11-23T09:00:00Z")!  // Monday 10:00 in Paris
    }

    override func setUpWithError() throws {
        store = try TestStore.fresh()
        let clock = self.clock
        board = ChoreBoard(store: store, timeZone: paris, now: { clock.now })
        for name in ["ann", "ben", "cat"] {
            _ = try store.insertAccount(Account(name: name, passwordHash: "x", createdAt: clock.now))
        }
        try store.saveRoom(Room(name: "#flat", createdAt: clock.now))
        try store.saveMembership(Membership(room: "#flat", account: "ann", role: .manager, since: clock.now))
        try store.saveMembership(Membership(room: "#flat", account: "ben", role: .member, since: clock.now))
        try store.saveMembership(Membership(room: "#flat", account: "cat", role: .member, since: clock.now))
    }

    func local(_ date: Date) -> String {
        let f = ISO8601DateFormatter()
        f.timeZone = paris
        return f.string(from: date)
    }

    func testRotationFollowsTheExplicitOrderAndCoversAreRecorded() throws {
        let (chore, events) = try board.add(name: "dishes", frequency: .days(1), hour: 20, minute: 0, from: nil,
                                            among: ["cat", "ann"], in: "#flat", by: "ann")
        XCTAssertEqual(chore.rotation, ["cat", "ann"])
        XCTAssertEqual(local(chore.due), "2026-11-23T20:00:00+01:00")
        XCTAssertEqual(events.map(\.type), [EventType.choreAdded, EventType.turnStarted])
        XCTAssertEqual(events[1].concerns, ["cat"], "only the person whose turn it is is told")

        let (afterCat, doneEvents) = try board.done("DISHES", in: "#flat", by: "cat")
        XCTAssertEqual(afterCat.whoseTurn, "ann")
        XCTAssertEqual(local(afterCat.due), "2026-11-24T20:00:00+01:00")
        XCTAssertNil(doneEvents[0].data["covered"])

        let (afterBen, covered) = try board.done("dishes", in: "#flat", by: "ben")
        XCTAssertEqual(covered[0].data["covered"], "ann", "ben covered for ann")
        XCTAssertEqual(afterBen.whoseTurn, "cat")
    }

    func testSkipIsNotACompletionAndNeedsTheRightPerson() throws {
        _ = try board.add(name: "bins", frequency: .weeks(1), hour: 7, minute: 30, from: nil, among: nil, in: "#flat", by: "ann")
        XCTAssertThrowsError(try board.skip("bins", reason: "", in: "#flat", by: "ben"), "it is ann's turn")
        let (chore, events) = try board.skip("bins", reason: "away", in: "#flat", by: "ann")
        XCTAssertEqual(events.map(\.type), [EventType.turnSkipped, EventType.turnStarted])
        XCTAssertEqual(chore.whoseTurn, "ben", "default rotation is the join order")
    }

    func testLateTurnsCatchUpAndCadenceHolds() throws {
        let (chore, _) = try board.add(name: "plants", frequency: .days(3), hour: 9, minute: 0, from: nil, among: nil, in: "#flat", by: "ann")
        XCTAssertEqual(local(chore.due), "2026-11-24T09:00:00+01:00")
        clock.now = clock.now.addingTimeInterval(10 * 86_400)  // ten days late
        let (next, events) = try board.done("plants", in: "#flat", by: "ann")
        XCTAssertEqual(events[0].data["late"], "yes")
        XCTAssertGreaterThan(next.due, clock.now, "the next turn is due after now, on the 3-day cadence")
        XCTAssertEqual(local(next.due), "2026-12-06T09:00:00+01:00")
    }

    func testWeekdaysMonthlyAndDaylightSaving() throws {
        let cal: Calendar = { var c = Calendar(identifier: .gregorian); c.timeZone = paris; return c }()
        let monday = clock.now
        let f = Frequency.weekdays([2, 5])  // mon, thu
        XCTAssertEqual(local(f.first(after: monday, hour: 8, minute: 0, calendar: cal)), "2026-11-26T08:00:00+01:00")
        XCTAssertEqual(local(f.step(from: ISO8601DateFormatter().date(from: "2026-11-26T07:00:00Z")!, hour: 8, minute: 0, calendar: cal)),
                       "2026-11-30T08:00:00+01:00")
        XCTAssertEqual(local(Frequency.monthly.step(from: ISO8601DateFormatter().date(from: "2026-01-31T18:00:00Z")!, hour: 19, minute: 0,
                                                   calendar: cal)), "2026-02-28T19:00:00+01:00")
        // At month's end it stays at month's end, not on the 28th from February on.
        var due = ISO8601DateFormatter().date(from: "2026-01-31T18:00:00Z")!
        var dues: [String] = []
        for _ in 0..<4 {
            due = Frequency.monthly.step(from: due, hour: 19, minute: 0, calendar: cal)
            dues.append(String(local(due).prefix(10)))
        }
        XCTAssertEqual(dues, ["2026-02-28", "2026-03-31", "2026-04-30", "2026-05-31"])
        XCTAssertEqual(String(local(Frequency.monthly.step(from: ISO8601DateFormatter().date(from: "2026-01-15T18:00:00Z")!, hour: 19,
                                                           minute: 0, calendar: cal)).prefix(10)), "2026-02-15")
        // Across the spring change (29 March 2026) a daily 20:00 chore stays at 20:00 local time.
        let before = ISO8601DateFormatter().date(from: "2026-03-28T19:00:00Z")!  // 20:00 CET
        XCTAssertEqual(local(Frequency.days(1).step(from: before, hour: 20, minute: 0, calendar: cal)), "2026-03-29T20:00:00+02:00")
        XCTAssertEqual(Frequency.parse("mon,thu"), .weekdays([2, 5]))
        XCTAssertEqual(Frequency.parse("fortnight"), .weeks(2))
        XCTAssertEqual(Frequency.parse("fortnightly"), .weeks(2))
        XCTAssertEqual(Frequency.parse("other day"), .days(2))
        XCTAssertEqual(Frequency.parse("other week"), .weeks(2))
        XCTAssertNil(Frequency.parse("other month"))
        XCTAssertTrue(Frequency.adverbs.allSatisfy { Frequency.parse($0) != nil })
        XCTAssertEqual(Frequency.parse("2 weeks"), .weeks(2))
    }

    /// A monthly chore keeps the day of the month it started on: on the 30th it is due on February's
    /// last day, and on the 30th again after it; one typed as `month` is kept so, and edited too.
    func testAMonthlyChoreKeepsItsDayOfTheMonth() throws {
        let cal: Calendar = { var c = Calendar(identifier: .gregorian); c.timeZone = paris; return c }()
        func dues(_ f: Frequency, from start: String, count: Int = 4) -> [String] {
            var due = ISO8601DateFormatter().date(from: start)!
            return (0..<count).map { _ in
                due = f.step(from: due, hour: 19, minute: 0, calendar: cal)
                return String(local(due).prefix(10))
            }
        }
        XCTAssertEqual(dues(.monthlyOn(30), from: "2026-01-30T18:00:00Z"), ["2026-02-28", "2026-03-30", "2026-04-30", "2026-05-30"])
        XCTAssertEqual(dues(.monthlyOn(31), from: "2026-01-31T18:00:00Z"), ["2026-02-28", "2026-03-31", "2026-04-30", "2026-05-31"])
        XCTAssertEqual(dues(.monthlyOn(29), from: "2027-12-29T18:00:00Z", count: 3), ["2028-01-29", "2028-02-29", "2028-03-29"])
        // Its first due time: its day this month while it is ahead, else next month's.
        XCTAssertEqual(local(Frequency.monthlyOn(30).first(after: clock.now, hour: 19, minute: 0, calendar: cal)), "2026-11-30T19:00:00+01:00")
        XCTAssertEqual(local(Frequency.monthlyOn(2).first(after: clock.now, hour: 19, minute: 0, calendar: cal)), "2026-12-02T19:00:00+01:00")

        // `month`, from the 30th: kept as the 30th, stored so, and after February it is the 30th again.
        let start = ISO8601DateFormatter().date(from: "2027-01-30T00:00:00Z")!
        let (rent, _) = try board.add(name: "rent", frequency: .monthly, hour: 19, minute: 0, from: start, among: ["ann"],
                                      in: "#flat", by: "ann")
        XCTAssertEqual(rent.frequency, .monthlyOn(30))
        XCTAssertEqual(try store.chore(named: "rent", in: "#flat")?.frequency, .monthlyOn(30))
        XCTAssertEqual(rent.frequency.description, "every month")
        var seen: [String] = []
        for _ in 0..<3 {
            let due = try XCTUnwrap(try store.chore(named: "rent", in: "#flat")).due
            seen.append(String(local(due).prefix(10)))
            clock.now = due.addingTimeInterval(60)
            _ = try board.done("rent", in: "#flat", by: "ann")
        }
        XCTAssertEqual(seen, ["2027-01-30", "2027-02-28", "2027-03-30"])
        // A new time keeps the day; a chore stored as plain `monthly` before still reads and steps.
        _ = try board.edit("rent", frequency: nil, hour: 8, minute: 30, in: "#flat", by: "ann")
        XCTAssertEqual(local(try XCTUnwrap(try store.chore(named: "rent", in: "#flat")).due), "2027-04-30T08:30:00+02:00")
        XCTAssertEqual(dues(.monthly, from: "2026-01-15T18:00:00Z", count: 1), ["2026-02-15"])
    }

    func testAnEditKeepsTheDayATurnIsDueOn() throws {
        // Monday 23 Nov, 10:00 in Paris: a weekly chore due at 18:00 today, done early twice.
        _ = try board.add(name: "bins", frequency: .weeks(1), hour: 18, minute: 0, from: nil, among: ["ann", "ben", "cat"],
                          in: "#flat", by: "ann")
        _ = try board.done("bins", in: "#flat", by: "ann")
        _ = try board.done("bins", in: "#flat", by: "ben")
        func due() throws -> String { local(try XCTUnwrap(try store.chore(named: "bins", in: "#flat")).due) }
        XCTAssertEqual(try due(), "2026-12-07T18:00:00+01:00")

        // A new time of day: the same day, not the next slot from now (this evening).
        _ = try board.edit("bins", frequency: nil, hour: 7, minute: 30, in: "#flat", by: "ann")
        XCTAssertEqual(try due(), "2026-12-07T07:30:00+01:00")
        // How often: the first new slot on or after that day.
        _ = try board.edit("bins", frequency: .weekdays([5]), hour: nil, minute: nil, in: "#flat", by: "ann")
        XCTAssertEqual(try due(), "2026-12-10T07:30:00+01:00")  // the Thursday after
        XCTAssertEqual(try store.chore(named: "bins", in: "#flat")?.whoseTurn, "cat")

        // A turn whose day has passed is due at the next slot from now.
        clock.now = ISO8601DateFormatter().date(from: "2026-12-12T09:00:00Z")!  // Saturday
        _ = try board.edit("bins", frequency: .days(2), hour: 20, minute: 0, in: "#flat", by: "ann")
        XCTAssertEqual(try due(), "2026-12-12T20:00:00+01:00")
    }

    func testAWeekdayChoreStartingLaterFallsOnItsWeekday() throws {
        // `every sun from 2026-12-01`: 1 December is a Tuesday; the first turn is Sunday the 6th.
        let start = ISO8601DateFormatter().date(from: "2026-12-01T00:00:00Z")!
        let (sunday, _) = try board.add(name: "bins", frequency: .weekdays([1]), hour: 19, minute: 0, from: start, among: nil,
                                        in: "#flat", by: "ann")
        XCTAssertEqual(local(sunday.due), "2026-12-06T19:00:00+01:00")
        // A start on one of its weekdays is that day; a start in the past is the next turn to come.
        let (tuesday, _) = try board.add(name: "plants", frequency: .weekdays([3]), hour: 9, minute: 0, from: start, among: nil,
                                         in: "#flat", by: "ann")
        XCTAssertEqual(local(tuesday.due), "2026-12-01T09:00:00+01:00")
        let (daily, _) = try board.add(name: "post", frequency: .days(1), hour: 8, minute: 0, from: clock.now, among: nil,
                                       in: "#flat", by: "ann")
        XCTAssertEqual(local(daily.due), "2026-11-24T08:00:00+01:00", "Monday 08:00 had passed at 10:00")
    }

    func testAwayMembersAreLeftOutOfTheTurnsThatFallWhileTheyAreAway() throws {
        _ = try board.add(name: "dishes", frequency: .days(1), hour: 20, minute: 0, from: nil, among: ["ann", "ben", "cat"], in: "#flat", by: "ann")
        // Away from Monday 10:00 until Wednesday 10:00 (Paris): Monday's and Tuesday's turns fall
        // while ann is away, Wednesday's at 20:00 after she is back.
        let events = try board.away(until: clock.now.addingTimeInterval(2 * 86_400), in: "#flat", by: "ann")
        XCTAssertEqual(events.map(\.type), [EventType.memberAway, EventType.turnStarted])
        XCTAssertEqual(try store.chore(named: "dishes", in: "#flat")?.whoseTurn, "ben", "ann's turn tonight passed on")
        XCTAssertEqual(events[1].data["next"], "cat", "the room hears who is next, ann being away tomorrow")
        XCTAssertEqual(try board.done("dishes", in: "#flat", by: "ben").0.whoseTurn, "cat")
        let (afterCat, started) = try board.done("dishes", in: "#flat", by: "cat")
        XCTAssertEqual(afterCat.whoseTurn, "ann", "Wednesday evening's turn falls after ann is back: it is hers")
        XCTAssertEqual(local(afterCat.due), "2026-11-25T20:00:00+01:00")
        XCTAssertEqual(started[1].data["next"], "ben")
        XCTAssertEqual(try board.nextUp(afterCat), "ben", "!turn says the same as the event")
        XCTAssertThrowsError(try board.back(in: "#flat", by: "ben"), "ben was never away")
    }

    func testATurnThatFallsAfterTheAwayTimeIsNotGivenAway() throws {
        // Weekly on Friday: ann's turn falls after her one day away.
        _ = try board.add(name: "bins", frequency: .weekdays([6]), hour: 8, minute: 0, from: nil, among: ["ann", "ben"], in: "#flat", by: "ann")
        let events = try board.away(until: clock.now.addingTimeInterval(86_400), in: "#flat", by: "ann")
        XCTAssertEqual(events.map(\.type), [EventType.memberAway], "no turn passes on")
        XCTAssertEqual(try store.chore(named: "bins", in: "#flat")?.whoseTurn, "ann")
    }

    func testComingBackEarlyGivesBackATurnThatPassedForNothing() throws {
        _ = try board.add(name: "dishes", frequency: .days(1), hour: 20, minute: 0, from: nil, among: ["ann", "ben", "cat"], in: "#flat", by: "ann")
        _ = try board.add(name: "bins", frequency: .days(1), hour: 8, minute: 0, from: nil, among: ["ann", "cat"], in: "#flat", by: "ann")
        _ = try board.away(until: clock.now.addingTimeInterval(3 * 86_400), in: "#flat", by: "ann")
        XCTAssertEqual(try store.chore(named: "dishes", in: "#flat")?.whoseTurn, "ben")
        XCTAssertEqual(try store.chore(named: "bins", in: "#flat")?.whoseTurn, "cat")
        // Back at 12:00 (Paris): tonight's dishes have not fallen due, so they are ann's again;
        // tomorrow morning's bins too.
        clock.now = clock.now.addingTimeInterval(2 * 3600)
        let events = try board.back(in: "#flat", by: "ann")
        XCTAssertEqual(events.map(\.type), [EventType.memberBack, EventType.turnStarted, EventType.turnStarted])
        XCTAssertEqual(try store.chore(named: "dishes", in: "#flat")?.whoseTurn, "ann")
        XCTAssertEqual(try store.chore(named: "bins", in: "#flat")?.whoseTurn, "ann")
        XCTAssertEqual(try board.done("dishes", in: "#flat", by: "ann").0.whoseTurn, "ben", "the rotation goes on from ann")
    }

    func testATurnThatFellDueWhileAwayStaysWithWhoeverTookIt() throws {
        _ = try board.add(name: "dishes", frequency: .days(1), hour: 20, minute: 0, from: nil, among: ["ann", "ben"], in: "#flat", by: "ann")
        _ = try board.away(until: clock.now.addingTimeInterval(2 * 86_400), in: "#flat", by: "ann")
        clock.now = clock.now.addingTimeInterval(12 * 3600)  // Monday 22:00: ben's turn is due, not done
        let events = try board.back(in: "#flat", by: "ann")
        XCTAssertEqual(events.map(\.type), [EventType.memberBack])
        XCTAssertEqual(try store.chore(named: "dishes", in: "#flat")?.whoseTurn, "ben")
    }

    func testSwapChangesTheOrderOnlyWhenAccepted() throws {
        _ = try board.add(name: "bins", frequency: .weeks(1), hour: 8, minute: 0, from: nil, among: ["ann", "ben", "cat"], in: "#flat", by: "ann")
        _ = try board.askSwap("bins", with: "cat", in: "#flat", by: "ann")
        XCTAssertEqual(try store.chore(named: "bins", in: "#flat")?.rotation, ["ann", "ben", "cat"], "nothing changes on asking")
        XCTAssertThrowsError(try board.answerSwap(nil, accept: true, in: "#flat", by: "ben"), "ben was not asked")
        let events = try board.answerSwap("bins", accept: true, in: "#flat", by: "cat")
        XCTAssertEqual(events.map(\.type), [EventType.turnSwapped, EventType.turnStarted])
        let chore = try store.chore(named: "bins", in: "#flat")!
        XCTAssertEqual(chore.rotation, ["cat", "ben", "ann"])
        XCTAssertEqual(chore.whoseTurn, "cat")
        XCTAssertNil(chore.swapTo)
        _ = try board.askSwap("bins", with: "ben", in: "#flat", by: "cat")
        _ = try board.answerSwap(nil, accept: false, in: "#flat", by: "ben")
        XCTAssertEqual(try store.chore(named: "bins", in: "#flat")?.rotation, ["cat", "ben", "ann"], "declined: unchanged")
    }

    func testAgendaOrderAndListRules() throws {
        _ = try board.add(name: "dishes", frequency: .days(1), hour: 20, minute: 0, from: nil, among: ["ben", "cat"], in: "#flat", by: "ann")
        let agenda = try board.agenda(in: ["#flat"], days: 2)
        XCTAssertEqual(agenda.map(\.2), ["ben", "cat"])
        XCTAssertEqual(try board.agenda(in: ["#flat"], days: 7, only: "cat").count, 3)
        XCTAssertThrowsError(try board.add(name: "dishes", frequency: .days(1), hour: 20, minute: 0, from: nil, among: nil, in: "#flat", by: "ben"))
        XCTAssertThrowsError(try board.remove("dishes", in: "#flat", by: "ben"), "members do not remove chores")

        _ = try board.addItems(["milk", " eggs "], to: "groceries", in: "#flat", by: "ben")
        _ = try board.completeItem("EGGS", on: "groceries", in: "#flat", by: "cat")
        XCTAssertThrowsError(try board.completeItem("2", on: "groceries", in: "#flat", by: "cat"), "already ticked")
        _ = try board.removeItem("1", from: "groceries", in: "#flat", by: "cat")
        let list = try board.list("groceries", in: "#flat", by: "ann")
        XCTAssertEqual(list.items.map(\.text), ["eggs"])
        XCTAssertEqual(try board.lists(in: "#flat", by: "ann").map(\.name), ["groceries"])
        XCTAssertThrowsError(try board.lists(in: "#elsewhere", by: "ann"))
    }
}
