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
                case .notUTF8(let text): out.append("<not UTF-8> " + text)
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

    /// A line that is not UTF-8 is told apart (decoded with U+FFFD, for its command and label),
    /// however its bad bytes fall; a U+FFFD the client sent itself is UTF-8 like any character.
    func testLinesThatAreNotUTF8AreToldApart() {
        func framed(_ bytes: [UInt8]) -> [String] {
            var framer = LineFramer(maxLineLength: 64)
            var got: [String] = []
            framer.feed(ByteBuffer(bytes: bytes + [0x0A]), allocator: ByteBufferAllocator()) {
                switch $0 {
                case .line(let t): got.append(t)
                case .notUTF8(let t): got.append("<not UTF-8> " + t)
                case .tooLong: got.append("<too long>")
                }
            }
            return got
        }
        XCTAssertEqual(framed([0x61, 0xFF, 0x62]), ["<not UTF-8> a\u{FFFD}b"])
        // A 4-byte sequence cut after 3 bytes becomes one 3-byte U+FFFD: the length alone misses it.
        XCTAssertEqual(framed([0x61, 0xF0, 0x9F, 0x98, 0x62]), ["<not UTF-8> a\u{FFFD}b"])
        XCTAssertEqual(framed(Array("a\u{FFFD}b é 🧽".utf8)), ["a\u{FFFD}b é 🧽"])
    }
}
