import ChorusBot
import ChorusCore
import ChorusStore
import ChorusTestSupport
import ChorusWorkspace
import Foundation
import XCTest

/// `!track` and `!report` read and show times in the person's zone, across a daylight-saving change.
final class TimeCommandTests: XCTestCase {
    func run(_ line: String, at iso: String, zone: String, store: any ChorusStorage) -> [String] {
        let now = ISO8601DateFormatter().date(from: iso)!
        let boards = Boards(store: store, timeZone: TimeZone(identifier: "UTC")!, now: { now })
        let invocation = Invocation(account: "ann", nick: "ann", room: nil, rooms: [:], onlineAccounts: [:],
                                    timeZone: TimeZone(identifier: zone)!, now: now)
        return Bot(boards: boards).run(line, invocation).replies
    }

    /// The report's figures add up in the minutes it shows, and a timer that has run for seconds
    /// is 0m with no bar.
    func testAReportsFiguresAddUpAndASecondsOldTimerHasNoBar() throws {
        let store = try TestStore.fresh()
        _ = try store.insertAccount(Account(name: "ann", passwordHash: "x", createdAt: Date()))
        XCTAssertEqual(run("!track start study", at: "2026-11-23T07:00:00Z", zone: "UTC", store: store), ["study started at 07:00."])
        let fresh = run("!report day", at: "2026-11-23T07:00:40Z", zone: "UTC", store: store)
        XCTAssertEqual(fresh, ["Your time today, by mode (total 0m):", "  study                      0m 0%"])
        _ = run("!track stop", at: "2026-11-23T09:00:00Z", zone: "UTC", store: store)
        _ = run("!plan add study mon 9:00-10:30", at: "2026-11-23T09:00:00Z", zone: "UTC", store: store)
        _ = run("!track start study", at: "2026-11-23T09:45:00Z", zone: "UTC", store: store)
        // 2h 00m and 1h 15m 30s logged: 3h 15m; planned 1h 30m: 1h 45m over, not 1h 46m.
        let report = run("!report day", at: "2026-11-23T11:00:30Z", zone: "UTC", store: store)
        XCTAssertEqual(report.last, "  Planned so far 1h 30m, logged 3h 15m: study 1h 45m over.", "\(report)")
        // Time in another mode does not make up for a planned one: as much exercise as planned study is not "as planned".
        _ = run("!track stop", at: "2026-11-23T11:00:30Z", zone: "UTC", store: store)
        _ = run("!plan add work mon 12:00-13:00", at: "2026-11-23T11:00:30Z", zone: "UTC", store: store)
        _ = run("!track add exercise 12:00-13:00", at: "2026-11-23T13:30:00Z", zone: "UTC", store: store)
        let apart = run("!report day", at: "2026-11-23T13:30:00Z", zone: "UTC", store: store)
        XCTAssertEqual(apart.last, "  Planned so far 2h 30m, logged 4h 15m: study 1h 45m over, work 1h 00m short, 1h 00m outside the plan.",
                       "\(apart)")
    }

    /// Paris leaves summer time at 03:00 on Sunday 25 Oct 2026, when clocks go back to 02:00:
    /// 01:30 to 03:30 that night lasts three hours, and the day has 25.
    func testANightWhenTheClocksGoBackLastsAnHourLonger() throws {
        let store = try TestStore.fresh()
        _ = try store.insertAccount(Account(name: "ann", passwordHash: "x", createdAt: Date()))
        try store.setTimeZone("Europe/Paris", of: "ann")
        let noon = "2026-10-25T11:00:00Z"  // 12:00 in Paris, winter time
        XCTAssertEqual(run("!track add work 1:30-3:30 night shift", at: noon, zone: "Europe/Paris", store: store),
                       ["Entry 1: work Sun 25 Oct 01:30–03:30 (3h 00m)."])
        let entry = try XCTUnwrap(store.entry(1))
        XCTAssertEqual(entry.start, ISO8601DateFormatter().date(from: "2026-10-24T23:30:00Z"), "01:30 summer time")
        XCTAssertEqual(entry.end, ISO8601DateFormatter().date(from: "2026-10-25T02:30:00Z"), "03:30 winter time")
        XCTAssertEqual(run("!track add study 23:30-0:30 yesterday", at: noon, zone: "Europe/Paris", store: store),
                       ["Entry 2: study Sat 24 Oct 23:30–00:30 (1h 00m)."])
        // The day in Paris began at 22:00 UTC on the 24th (summer time): half of the study hour is in it.
        let report = run("!report day", at: noon, zone: "Europe/Paris", store: store)
        XCTAssertEqual(report.first, "Your time today, by mode (total 3h 30m):")
        XCTAssertTrue(report[1].hasPrefix("  work  ") && report[1].hasSuffix(" 3h 00m 86%"), report[1])
        XCTAssertTrue(report[2].hasPrefix("  study ") && report[2].hasSuffix(" 30m 14%"), report[2])
        XCTAssertEqual(run("!track add work 24:61-1:00", at: noon, zone: "Europe/Paris", store: store),
                       ["“24:61-1:00” is not a time range: HH:MM-HH:MM, e.g. 9:00-10:30"])
    }
}
