import ChorusBot
import Foundation
import XCTest

final class WhenTests: XCTestCase {
    // Monday 2026-11-23 10:00 in Paris (09:00 UTC).
    let paris = TimeZone(identifier: "Europe/Paris")!
    var now: Date { ISO8601DateFormatter().date(from: "2026-11-23T09:00:00Z")! }

    func iso(_ result: When.Result?) -> String? {
        guard case .date(let d)? = result else { return nil }
        let f = ISO8601DateFormatter()
        f.timeZone = paris
        return f.string(from: d)
    }

    func testForms() {
        let w = When(timeZone: paris)
        XCTAssertEqual(iso(w.parse("tomorrow 17:00", now: now)), "2026-11-24T17:00:00+01:00")
        XCTAssertEqual(iso(w.parse("fri", now: now)), "2026-11-27T17:00:00+01:00")
        XCTAssertEqual(iso(w.parse("mon", now: now)), "2026-11-30T17:00:00+01:00", "a weekday means the next one, not today")
        XCTAssertEqual(iso(w.parse("in 3d", now: now)), "2026-11-26T10:00:00+01:00")
        XCTAssertEqual(iso(w.parse("in 2 hours", now: now)), "2026-11-23T12:00:00+01:00")
        XCTAssertEqual(iso(w.parse("2026-12-01", now: now)), "2026-12-01T17:00:00+01:00")
        XCTAssertEqual(iso(w.parse("2026-12-01 9:30", now: now)), "2026-12-01T09:30:00+01:00")
        XCTAssertEqual(iso(w.parse("today 6pm", now: now)), "2026-11-23T18:00:00+01:00")
        XCTAssertEqual(iso(w.parse("9:00", now: now)), "2026-11-24T09:00:00+01:00", "a time already past means tomorrow")
        XCTAssertEqual(iso(w.parse("next week", now: now)), "2026-11-30T17:00:00+01:00")
        XCTAssertEqual(w.parse("none", now: now), When.Result.none)
        XCTAssertNil(w.parse("someday", now: now))
        XCTAssertNil(w.parse("2026-02-31", now: now))
        XCTAssertNil(w.parse("25:00", now: now))
        XCTAssertNil(w.parse("in lots", now: now))
    }

    func testTimeZoneMatters() {
        let tokyo = When(timeZone: TimeZone(identifier: "Asia/Tokyo")!)
        XCTAssertEqual(iso(tokyo.parse("2026-12-01 9:00", now: now)), "2026-12-01T01:00:00+01:00")
    }

    func testDaylightSavingChange() {
        // Paris leaves summer time on 2026-10-25: "in 1d" from the day before keeps the wall clock.
        let w = When(timeZone: paris)
        let before = ISO8601DateFormatter().date(from: "2026-10-24T08:00:00Z")!  // 10:00 CEST
        XCTAssertEqual(iso(w.parse("in 1d", now: before)), "2026-10-25T10:00:00+01:00")
    }
}
