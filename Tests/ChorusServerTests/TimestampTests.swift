@testable import ChorusServer
@testable import ChorusStore
import Foundation
import XCTest

/// `server-time` stamps are written by hand (no DateFormatter): the calendar arithmetic and the
/// zero padding are checked here against dates whose stamps are known.
final class TimestampTests: XCTestCase {
    func testFormatsKnownDates() {
        let cases: [(Double, String)] = [
            (0, "1970-01-01T00:00:00.000Z"),
            (1_795_414_800.123, "2026-11-23T06:20:00.123Z"),
            (1_709_251_199.999, "2024-02-29T23:59:59.999Z"),  // leap day, last millisecond
            (951_782_400, "2000-02-29T00:00:00.000Z"),        // a leap century
            (-0.001, "1969-12-31T23:59:59.999Z"),             // before the epoch
            (-62_135_596_800, "0001-01-01T00:00:00.000Z"),
        ]
        for (seconds, stamp) in cases {
            XCTAssertEqual(Timestamp.format(Date(timeIntervalSince1970: seconds)), stamp)
            XCTAssertEqual(Timestamp.parse(stamp).map { Timestamp.format($0) }, stamp, "round trip of \(stamp)")
        }
    }

    /// A line's live stamp is the stamp it gets again from the store: the same millisecond.
    func testALiveStampAndTheStoredTimeAgree() {
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<10_000 {
            let date = Date(timeIntervalSince1970: Double.random(in: 1_700_000_000...1_900_000_000, using: &generator))
            let stored = Millis.date(Millis.from(date))
            XCTAssertEqual(Timestamp.format(date), Timestamp.format(stored), "\(date.timeIntervalSince1970)")
        }
    }

    func testShortFormForReplayedLines() {
        XCTAssertEqual(Timestamp.short(Date(timeIntervalSince1970: 1_795_414_800.123)), "2026-11-23 06:20 UTC")
        XCTAssertEqual(Timestamp.short(Date(timeIntervalSince1970: 5)), "1970-01-01 00:00 UTC")
    }
}
