@testable import ChorusServer
@testable import ChorusStore
import ChorusCore
import Foundation
import XCTest
import ChorusSQL

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

/// Message ids spell the time (ms since 1970) and a counter in base 36, around this server's
/// random prefix, so ids sort by creation and never repeat within a run.
final class MessageIDTests: XCTestCase {
    func testIDsSpellTheTimeAndACounterInBase36() throws {
        var ids = MessageIDs()
        let times: [Double] = [0, 0.001, 35.999, 1_795_414_800.123, 253_402_300_799.999] + (0..<2000).map { _ in Double.random(in: 0..<4e9) }
        var prefixes = Set<String>()
        for (i, seconds) in times.enumerated() {
            let date = Date(timeIntervalSince1970: seconds)
            let id = ids.next(at: date)
            let parts = id.split(separator: "-", omittingEmptySubsequences: false).map(String.init)
            XCTAssertEqual(parts.count, 3, id)
            XCTAssertEqual(parts[0], String(UInt64(date.timeIntervalSince1970 * 1000), radix: 36), "\(seconds): \(id)")
            XCTAssertEqual(parts[2], String(i + 1, radix: 36), id)
            prefixes.insert(parts[1])
        }
        XCTAssertEqual(prefixes.count, 1, "one prefix per server")
        XCTAssertFalse(prefixes.first!.isEmpty)
    }
}
