@testable import ChorusServer
import NIOCore
import XCTest

/// The framer on its own: lines split across reads, CR LF or LF, over-long lines reported once.
final class LineFramerTests: XCTestCase {
    func lines(_ chunks: [String], max: Int = 16) -> [String] {
        var framer = LineFramer(maxLineLength: max)
        var out: [String] = []
        for chunk in chunks {
            framer.feed(ByteBuffer(string: chunk), allocator: ByteBufferAllocator()) { line in
                switch line {
                case .line(let text): out.append(text)
                case .tooLong: out.append("<too long>")
                }
            }
        }
        return out
    }

    func testLinesAcrossReads() {
        XCTAssertEqual(lines(["NI", "CK a\r", "\nUSER b\nPING", " c\r\n"]), ["NICK a", "USER b", "PING c"])
        XCTAssertEqual(lines(["\r\n\n"]), ["", ""])
        XCTAssertEqual(lines(["no end yet"]), [])
    }

    func testOverLongLinesAreReportedOnceAndSkipped() {
        // One line over the limit in one read, then a good one.
        XCTAssertEqual(lines(["0123456789abcdefXYZ\nok\n"]), ["<too long>", "ok"])
        // An over-long line arriving in pieces: reported once, its rest skipped, the next line kept.
        XCTAssertEqual(lines(["0123456789abcdefXYZ", "more and more", " end\nok\n"]), ["<too long>", "ok"])
        // Exactly the limit is fine.
        XCTAssertEqual(lines(["0123456789abcdef\n"]), ["0123456789abcdef"])
    }

    func testInvalidUTF8BecomesReplacementCharacters() {
        var framer = LineFramer(maxLineLength: 64)
        var got: [String] = []
        framer.feed(ByteBuffer(bytes: [0x61, 0xFF, 0x62, 0x0A]), allocator: ByteBufferAllocator()) {
            if case .line(let t) = $0 { got.append(t) }
        }
        XCTAssertEqual(got, ["a\u{FFFD}b"])
    }
}
