@testable import ChorusBot
import Foundation
import Testing

/// Written with Swift Testing (the rest of the suite is XCTest), so both runners report real tests.
@Suite struct WhenTests {
    // Monday 2026-11-23 10:00 in Paris (09:00 UTC).
    let paris = TimeZone(identifier: "Europe/Paris")!
    let now = ISO8601DateFormatter().date(from: "2026-11-23T09:00:00Z")!

    func iso(_ result: When.Result?) -> String? {
        guard case .date(let d)? = result else { return nil }
        let f = ISO8601DateFormatter()
        f.timeZone = paris
        return f.string(from: d)
    }

    @Test func forms() {
        let w = When(timeZone: paris)
        #expect(iso(w.parse("tomorrow 17:00", now: now)) == "2026-11-24T17:00:00+01:00")
        #expect(iso(w.parse("fri", now: now)) == "2026-11-27T17:00:00+01:00")
        #expect(iso(w.parse("mon", now: now)) == "2026-11-30T17:00:00+01:00", "a weekday means the next one, not today")
        #expect(iso(w.parse("in 3d", now: now)) == "2026-11-26T10:00:00+01:00")
        #expect(iso(w.parse("in 2 hours", now: now)) == "2026-11-23T12:00:00+01:00")
        #expect(iso(w.parse("2026-12-01", now: now)) == "2026-12-01T17:00:00+01:00")
        #expect(iso(w.parse("2026-12-01 9:30", now: now)) == "2026-12-01T09:30:00+01:00")
        #expect(iso(w.parse("today 6pm", now: now)) == "2026-11-23T18:00:00+01:00")
        #expect(iso(w.parse("9:00", now: now)) == "2026-11-24T09:00:00+01:00", "a time already past means tomorrow")
        #expect(iso(w.parse("next week", now: now)) == "2026-11-30T17:00:00+01:00")
        #expect(w.parse("none", now: now) == When.Result.none)
        #expect(w.parse("someday", now: now) == nil)
        #expect(w.parse("2026-02-31", now: now) == nil)
        #expect(w.parse("25:00", now: now) == nil)
        #expect(w.parse("in lots", now: now) == nil)
    }

    @Test func monthsNoonMinutesAndThePast() {
        let w = When(timeZone: paris)
        #expect(iso(w.parse("noon", now: now)) == "2026-11-23T12:00:00+01:00")
        #expect(iso(w.parse("midnight", now: now)) == "2026-11-23T23:59:00+01:00")
        #expect(iso(w.parse("in 90m", now: now)) == "2026-11-23T11:30:00+01:00")
        #expect(iso(w.parse("dec 5", now: now)) == "2026-12-05T17:00:00+01:00")
        #expect(iso(w.parse("5 dec 9:00", now: now)) == "2026-12-05T09:00:00+01:00")
        #expect(iso(w.parse("december 5th", now: now)) == "2026-12-05T17:00:00+01:00")
        #expect(iso(w.parse("jan 3", now: now)) == "2027-01-03T17:00:00+01:00", "a month day long past is next year's")
        #expect(iso(w.parse("nov 20", now: now)) == "2026-11-20T17:00:00+01:00", "a month day just past stays this year's")
        #expect(iso(w.parse("yesterday", now: now)) == "2026-11-22T17:00:00+01:00")
        #expect(iso(w.parse("last friday", now: now)) == "2026-11-20T17:00:00+01:00")
        #expect(iso(w.parse("last mon", now: now)) == "2026-11-16T17:00:00+01:00", "last mon on a Monday is a week ago")
        #expect(w.parse("dec 32", now: now) == nil)
        #expect(w.parse("feb 30", now: now) == nil)
    }

    /// A weekday typed on that day with a time still ahead means today; without a time, or with
    /// a time already past, a week on.
    @Test func todaysWeekdayWithATimeAhead() {
        let w = When(timeZone: paris)
        #expect(iso(w.parse("mon 12:00", now: now)) == "2026-11-23T12:00:00+01:00")
        #expect(iso(w.parse("mon 9:00", now: now)) == "2026-11-30T09:00:00+01:00")
        #expect(iso(w.parse("mon", now: now)) == "2026-11-30T17:00:00+01:00")
        #expect(iso(w.parse("tue 9:00", now: now)) == "2026-11-24T09:00:00+01:00")
    }

    @Test func timeZoneMatters() {
        let tokyo = When(timeZone: TimeZone(identifier: "Asia/Tokyo")!)
        #expect(iso(tokyo.parse("2026-12-01 9:00", now: now)) == "2026-12-01T01:00:00+01:00")
    }

    @Test func daylightSavingChange() {
        // Paris leaves summer time on 2026-10-25: "in 1d" from the day before keeps the wall clock.
        let w = When(timeZone: paris)
        let before = ISO8601DateFormatter().date(from: "2026-10-24T08:00:00Z")!  // 10:00 CEST
        #expect(iso(w.parse("in 1d", now: before)) == "2026-10-25T10:00:00+01:00")
    }

    /// `created:` looks back: a weekday is the last one (today if it is one), `week` the last seven days.
    @Test func createdDaysLookBack() throws {
        let w = When(timeZone: paris)
        let f = ISO8601DateFormatter()
        f.timeZone = paris
        func day(_ text: String) -> String? { Bot.pastRange(text, w, now: now).map { f.string(from: $0.0) + "/" + f.string(from: $0.1) } }
        #expect(day("mon") == "2026-11-23T00:00:00+01:00/2026-11-24T00:00:00+01:00")
        #expect(day("wed") == "2026-11-18T00:00:00+01:00/2026-11-19T00:00:00+01:00")
        #expect(day("sunday") == "2026-11-22T00:00:00+01:00/2026-11-23T00:00:00+01:00")
        #expect(day("yesterday") == "2026-11-22T00:00:00+01:00/2026-11-23T00:00:00+01:00")
        #expect(day("week") == "2026-11-17T00:00:00+01:00/2026-11-24T00:00:00+01:00")
        #expect(day("2026-11-01") == "2026-11-01T00:00:00+01:00/2026-11-02T00:00:00+01:00")
        #expect(day("someday") == nil)
    }
}
