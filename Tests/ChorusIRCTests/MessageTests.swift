import ChorusIRC
import XCTest

final class MessageTests: XCTestCase {
    func testParsesTagsSourceVerbAndTrailing() throws {
        let m = try Message.parse("@time=2026-01-01T00:00:00.000Z;+draft/reply=abc;flag :nick!u@h privmsg #room :hello  there")
        XCTAssertEqual(m.tag("time"), "2026-01-01T00:00:00.000Z")
        XCTAssertEqual(m.tag("+draft/reply"), "abc")
        XCTAssertEqual(m.tag("flag"), "")
        XCTAssertEqual(m.source, "nick!u@h")
        XCTAssertEqual(m.command, "PRIVMSG")
        XCTAssertEqual(m.params, ["#room", "hello  there"])
        XCTAssertEqual(m.clientTags.map(\.key), ["+draft/reply"])
    }

    func testMiddleParamsAndEmptyTrailing() throws {
        XCTAssertEqual(try Message.parse("USER a 0 * :").params, ["a", "0", "*", ""])
        XCTAssertEqual(try Message.parse("MODE   #c  +o   bob").params, ["#c", "+o", "bob"])
        XCTAssertEqual(try Message.parse("PING").params, [])
        XCTAssertEqual(try Message.parse("001 x :hi").command, "001")
    }

    func testTagValuesAreUnescapedAndEscapedBack() throws {
        let m = try Message.parse(#"@k=a\:b\sc\\d\r\n TAGMSG #c"#)
        XCTAssertEqual(m.tag("k"), "a;b c\\d\r\n")
        XCTAssertEqual(m.serialized(), #"@k=a\:b\sc\\d\r\n TAGMSG #c"#)
        XCTAssertEqual(Message.serializedTags([.init("a", "plain"), .init("b", ""), .init("c", "x y;z")]), #"a=plain;b;c=x\sy\:z"#)
    }

    /// A space followed by a combining mark is one Swift Character but still a separator on the wire.
    func testCombiningMarksAfterSpacesDoNotHideSeparators() throws {
        XCTAssertEqual(try Message.parse("MODE #c \u{301}x").params, ["#c", "\u{301}x"])
        let m = Message("PRIVMSG", "#c", "a \u{301}b")
        XCTAssertEqual(m.serialized(), "PRIVMSG #c :a \u{301}b")
        XCTAssertEqual(try Message.parse(m.serialized()), m)
    }

    /// Trailing only where needed, except a message's text, which is always trailing (`:hi`).
    func testSerializerUsesTrailingOnlyWhenNeeded() {
        XCTAssertEqual(Message(source: "s", "PRIVMSG", "#c", "hi").serialized(), ":s PRIVMSG #c :hi")
        XCTAssertEqual(Message(source: "s", "NOTICE", "#c", "hi").serialized(), ":s NOTICE #c :hi")
        XCTAssertEqual(Message(source: "s", "TOPIC", "#c", "hi").serialized(), ":s TOPIC #c hi")
        XCTAssertEqual(Message("PRIVMSG", "#c", "hi there").serialized(), "PRIVMSG #c :hi there")
        XCTAssertEqual(Message("PRIVMSG", "#c", ":)").serialized(), "PRIVMSG #c ::)")
        XCTAssertEqual(Message("TOPIC", "#c", "").serialized(), "TOPIC #c :")
        XCTAssertEqual(Message(tags: [.init("a", "1")], "PING", "x").serialized(includeTags: false), "PING x")
    }

    /// The wire form a server writes: the tags given replace the message's own, the line ends in
    /// CR LF, a middle parameter that cannot stay one is repaired, and UTF-8 comes through whole.
    func testWriteLineCarriesTheGivenTagsAndEndsInCRLF() {
        let m = Message(tags: [.init("own", "x")], source: "ä!u@h", "PRIVMSG", ["#ç", ":a b é", "zwölf ü"])
        var out: [UInt8] = Array("prefix|".utf8)
        m.writeLine(to: &out, tags: [.init("time", "t 1;2"), .init("flag")])
        XCTAssertEqual(String(decoding: out, as: UTF8.self), "prefix|@time=t\\s1\\:2;flag :ä!u@h PRIVMSG #ç a_b_é :zwölf ü\r\n")
        out = []
        m.writeLine(to: &out, tags: [])
        XCTAssertEqual(String(decoding: out, as: UTF8.self), ":ä!u@h PRIVMSG #ç a_b_é :zwölf ü\r\n")
        out = []
        Message("MODE", ["#c", "", "+o"]).writeLine(to: &out, tags: [])
        XCTAssertEqual(String(decoding: out, as: UTF8.self), "MODE #c * +o\r\n")
    }

    /// A server's reply lines are written without a `Message`: the same bytes, whichever way.
    func testBodyWrittenWithoutAMessageMatchesTheMessage() {
        let cases: [(String?, [String])] = [
            ("nick", []), (":odd", []), ("", []), ("nick", ["a", "b c"]), ("nick", ["mid dle", ""]),
            ("nick", [":x", "last"]), (nil, ["only"]), (nil, []),
        ]
        for (target, params) in cases {
            let tags: [Message.Tag] = [.init("time", "2026-01-01T00:00:00.000Z"), .init("batch", "b1")]
            var expected: [UInt8] = []
            Message(source: "srv", "372", (target.map { [$0] } ?? []) + params).writeLine(to: &expected, tags: tags)
            var body: [UInt8] = Array("junk".utf8)
            Message.writeBody(source: "srv", command: "372", target: target, params: params, to: &body)
            var line: [UInt8] = []
            Message.writeLine(tags: tags, body: body.dropFirst(4), to: &line)
            XCTAssertEqual(String(decoding: line, as: UTF8.self), String(decoding: expected, as: UTF8.self), "\(target ?? "-") \(params)")
        }
    }

    /// `ParamText` writes what the same `String` would: numbers as `String(n)` does, text as UTF-8,
    /// and the same trailing or repaired form wherever the parameter stands.
    func testParamTextWritesWhatTheSameStringWould() {
        for n in [0, 7, -7, 10, 1_234_567_890, Int.max, Int.min] {
            XCTAssertEqual(String(decoding: ("\(n)" as ParamText).bytes, as: UTF8.self), String(n))
        }
        let name = "Zoë ☕", count = 42
        let text: ParamText = "There are \(count) users in \(name), \(-1) left"
        XCTAssertEqual(String(decoding: text.bytes, as: UTF8.self), "There are 42 users in Zoë ☕, -1 left")
        var built = ParamText()
        built.append("a")
        built.append(UInt8(ascii: " "))
        built.append(name)
        XCTAssertEqual(String(decoding: built.bytes, as: UTF8.self), "a Zoë ☕")
        for param in ["", "plain", ":colon", "two words", "Zoë", " lead"] {
            for isLast in [false, true] {
                var fromString: [UInt8] = [], fromText: [UInt8] = []
                Message.writeParam(param, isLast: isLast, to: &fromString)
                var piece = ParamText()
                piece.append(param)
                Message.writeParam(piece, isLast: isLast, to: &fromText)
                XCTAssertEqual(fromText, fromString, "\(param) last: \(isLast)")
            }
        }
        var line: [UInt8] = []
        Message.writeParam("two words", isLast: false, to: &line)
        Message.writeParam(":x", isLast: true, to: &line)
        XCTAssertEqual(String(decoding: line, as: UTF8.self), " two_words ::x")
    }

    func testRoundTrip() throws {
        let lines = [":a!b@c JOIN #x", "@label=1 :srv 005 n A=1 B :are supported", "NOTICE n :x y z", "CAP * LS :sasl=PLAIN batch"]
        for line in lines { XCTAssertEqual(try Message.parse(line).serialized(), line) }
    }

    func testErrors() {
        XCTAssertThrowsError(try Message.parse("")) { XCTAssertEqual($0 as? ParseError, .empty) }
        XCTAssertThrowsError(try Message.parse(":only-source")) { XCTAssertEqual($0 as? ParseError, .missingCommand) }
        XCTAssertThrowsError(try Message.parse("PRI$MSG x")) { XCTAssertEqual($0 as? ParseError, .invalidCommand("PRI$MSG")) }
        XCTAssertThrowsError(try Message.parse("PRIVMSG #c :a\u{0}b")) { XCTAssertEqual($0 as? ParseError, .forbiddenCharacter) }
        XCTAssertThrowsError(try Message.parse("PRIVMSG #c :" + String(repeating: "x", count: 600))) {
            XCTAssertEqual($0 as? ParseError, .lineTooLong)
        }
        XCTAssertThrowsError(try Message.parse("@a=" + String(repeating: "x", count: 5000) + " PING x")) {
            XCTAssertEqual($0 as? ParseError, .tagsTooLong)
        }
    }

    /// The codec is total: random bytes give a message or an error, never a crash.
    func testRandomInputNeverCrashes() {
        var rng = SystemRandomNumberGenerator()
        let alphabet = Array("@:; =\\#!abcXYZ019\u{7f}é\u{301}\r\n\t".unicodeScalars)
        for _ in 0..<20_000 {
            let length = Int.random(in: 0..<80, using: &rng)
            var s = ""
            for _ in 0..<length { s.unicodeScalars.append(alphabet.randomElement(using: &rng)!) }
            if let m = try? Message.parse(s) {
                // Whatever parsed must serialize and parse again to the same message.
                XCTAssertEqual(try? Message.parse(m.serialized()), m, "input: \(s.debugDescription)")
            }
        }
    }

    func testNames() {
        XCTAssertEqual(Names.fold("Alice[]"), "alice[]")
        XCTAssertTrue(Names.isValidNick("a-b_c[1]"))
        XCTAssertFalse(Names.isValidNick("1abc"))
        XCTAssertFalse(Names.isValidNick("a b"))
        XCTAssertFalse(Names.isValidNick(String(repeating: "a", count: 31)))
        XCTAssertTrue(Names.isValidChannel("#kitchen"))
        XCTAssertFalse(Names.isValidChannel("#a,b"))
        XCTAssertFalse(Names.isValidChannel("#"))
        XCTAssertFalse(Names.isValidChannel("kitchen"))
        XCTAssertFalse(Names.isValidChannel("#" + String(repeating: "a", count: 50)))
        XCTAssertTrue(Names.isValidNick(String(repeating: "a", count: 30)))
        XCTAssertFalse(Names.isValidNick(""))
        XCTAssertFalse(Names.isValidNick("zoë"))
        XCTAssertTrue(Names.isChannel("#"))
        XCTAssertFalse(Names.isChannel("&local"))
        XCTAssertFalse(Names.isChannel(""))
        // Every byte, first and later in a nick, against the rule as the docs state it.
        let letters = Set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz[]\\`_^{|}".utf8)
        let later = Set("0123456789-".utf8)
        for byte in UInt8.min...UInt8.max {
            let text = String(decoding: [byte], as: UTF8.self)
            XCTAssertEqual(Names.isValidNick(text), letters.contains(byte), "nick \(byte)")
            XCTAssertEqual(Names.isValidNick("a" + text), letters.contains(byte) || later.contains(byte), "nick a+\(byte)")
        }
        XCTAssertTrue(Names.matches(mask: "*!*@127.*", "bob!~b@127.0.0.1"))
        XCTAssertTrue(Names.matches(mask: "B?B", "bob"))
        XCTAssertFalse(Names.matches(mask: "a*c", "abd"))
    }
}
