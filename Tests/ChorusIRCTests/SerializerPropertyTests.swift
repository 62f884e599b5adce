import ChorusIRC
import XCTest

/// Whatever a message holds, its line parses back to the same message: every parameter in its
/// place, the last one and every tag value exactly, and a middle parameter the wire cannot carry
/// (empty, with a space, or starting with ':') as a repaired one that still is one parameter.
final class SerializerPropertyTests: XCTestCase {
    /// Awkward pieces: colons, spaces, tag escapes, multi-byte characters, and plain words.
    static let pieces = [":", "::", " ", "  ", "x", "a b", ";", "\\", "=", "é", "🧽", "@", "!", "#room", "nick", "*", "\u{301}", "s"]

    func randomText(_ rng: inout some RandomNumberGenerator, allowEmpty: Bool = true) -> String {
        let count = Int.random(in: (allowEmpty ? 0 : 1)...4, using: &rng)
        return (0..<count).map { _ in Self.pieces.randomElement(using: &rng)! }.joined()
    }

    func testParseOfSerializeKeepsEveryParameterInPlace() throws {
        var rng = SystemRandomNumberGenerator()
        let deadline = Date().addingTimeInterval(5)
        var checked = 0
        while checked < 20_000 && Date() < deadline {
            let params = (0..<Int.random(in: 0...6, using: &rng)).map { _ in randomText(&rng) }
            let tags = (0..<Int.random(in: 0...3, using: &rng)).map { i in Message.Tag("+k\(i)", randomText(&rng)) }
            let source = Bool.random(using: &rng) ? "nick!user@host" : nil
            let message = Message(tags: tags, source: source, "PRIVMSG", params)
            let line = message.serialized()
            let parsed = try Message.parse(line)
            XCTAssertEqual(parsed.command, "PRIVMSG", line)
            XCTAssertEqual(parsed.source, source, line)
            XCTAssertEqual(parsed.tags, tags, line)
            XCTAssertEqual(parsed.params.count, params.count, "parameters shifted: \(params) → \(line)")
            for (i, (sent, got)) in zip(params, parsed.params).enumerated() {
                let isLast = i == params.count - 1
                // Bytes, not Characters: a space and a combining mark are one Character.
                let fits = !sent.isEmpty && sent.utf8.first != UInt8(ascii: ":") && !sent.utf8.contains(UInt8(ascii: " "))
                if isLast || fits {
                    XCTAssertEqual(got, sent, "parameter \(i) of \(params) → \(line)")
                } else {
                    XCTAssertFalse(got.isEmpty || got.utf8.first == UInt8(ascii: ":") || got.utf8.contains(UInt8(ascii: " ")),
                                   "repaired \(sent) → \(got)")
                }
            }
            checked += 1
        }
        XCTAssertGreaterThan(checked, 1000)
    }

    /// The cases fuzzing found: a lone ':' and '::x' in the middle.
    func testMiddleColonsKeepTheirPlace() throws {
        let line = Message(source: "a!b@c", "PRIVMSG", ["bob", ":", "::x", "z", "hi"]).serialized()
        XCTAssertEqual(line, ":a!b@c PRIVMSG bob * x z :hi")
        XCTAssertEqual(try Message.parse(line).params.count, 5)
    }

    /// A line too long for the wire: split, every line fits and parses and nothing is lost but the
    /// spaces it was broken at; cut, one line that fits and ends on a character boundary.
    func testOverlongLinesAreSplitOrCutOnCharacterBoundaries() throws {
        var rng = SystemRandomNumberGenerator()
        for _ in 0..<300 {
            let text = (0..<Int.random(in: 50...400, using: &rng)).map { _ in Self.pieces.randomElement(using: &rng)! }.joined()
            let message = Message(source: "Chorus!bot@chorus.local", "NOTICE", ["#room", text])
            var split: [UInt8] = []
            message.writeLines(to: &split, tags: [.init("msgid", "m1")], overlong: .split, continuation: { $0.key != "msgid" })
            let lines = String(decoding: split, as: UTF8.self).split(separator: "\r\n").map(String.init)
            var rebuilt = ""
            for (i, line) in lines.enumerated() {
                let parsed = try Message.parse(line)
                XCTAssertLessThanOrEqual(line.utf8.count - (line.firstIndex(of: " ").map { line.utf8.distance(from: line.utf8.startIndex, to: $0) + 1 } ?? 0) + 2, 512)
                XCTAssertEqual(parsed.tag("msgid"), i == 0 ? "m1" : nil, "the message id names the first line only")
                rebuilt += parsed.params[1]
            }
            // Bytes: a space before a combining mark is one Character with it, and may be a break.
            XCTAssertEqual(rebuilt.utf8.filter { $0 != 0x20 }, text.utf8.filter { $0 != 0x20 })
            var cut: [UInt8] = []
            message.writeLines(to: &cut, tags: [], overlong: .cut, continuation: { _ in true })
            XCTAssertLessThanOrEqual(cut.count, 512)
            XCTAssertNotNil(String(validating: cut, as: UTF8.self), "no character cut in two")
        }
    }
}
