extension Message {
    /// The message as one line, without CR LF. Tags are written only when `includeTags` is true,
    /// so one message can be written for clients with and without `message-tags`.
    public func serialized(includeTags: Bool = true) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(64 + params.reduce(0) { $0 + $1.utf8.count })
        writeBody(to: &out, tags: includeTags ? tags : [])
        return String(decoding: out, as: UTF8.self)
    }

    /// Appends the message to `out` as one wire line ending in CR LF, carrying `tags` instead of
    /// its own: a server writes one message with the tags each client's capabilities allow.
    ///
    /// The serializer writes bytes, not `String`s: a `String.append` costs a few hundred
    /// instructions and a line takes a dozen; a registration's 18 welcome lines spent a quarter of
    /// the server's instructions there (callgrind, 1,000 connections).
    public func writeLine(to out: inout [UInt8], tags: [Tag]) {
        writeBody(to: &out, tags: tags)
        out.append(UInt8(ascii: "\r"))
        out.append(UInt8(ascii: "\n"))
    }

    private func writeBody(to out: inout [UInt8], tags: [Tag]) {
        if !tags.isEmpty {
            out.append(UInt8(ascii: "@"))
            Message.write(tags, to: &out)
            out.append(UInt8(ascii: " "))
        }
        Message.writeBody(source: source, command: command, params: params, to: &out)
    }

    /// Appends a line's source, command and parameters (no tags, no CR LF) without making a
    /// `Message`: `target` is a first parameter written before `params` (a numeric's nick), so a
    /// server's reply lines need no array of their own.
    public static func writeBody(source: String?, command: String, target: String? = nil, params: [String],
                                 to out: inout [UInt8]) {
        if let source {
            out.append(UInt8(ascii: ":"))
            out.appendUTF8(source)
            out.append(UInt8(ascii: " "))
        }
        out.appendUTF8(command)
        if let target { writeParam(target, isLast: params.isEmpty, to: &out) }
        // A message's text is always written trailing, one word or not (`PRIVMSG bob :hi`): bots
        // that split at " :" read it, and a cut line keeps the shape other servers give it.
        let textAlwaysTrailing = command == "PRIVMSG" || command == "NOTICE"
        for (i, param) in params.enumerated() {
            let isLast = i == params.count - 1
            if isLast && textAlwaysTrailing {
                out.append(UInt8(ascii: " "))
                out.append(UInt8(ascii: ":"))
                out.appendUTF8(param)
            } else {
                writeParam(param, isLast: isLast, to: &out)
            }
        }
    }

    /// Appends parameters as they follow a command, each after a space, the last one trailing when it
    /// must be: for lines whose parameters are fixed, written once (a server's ISUPPORT and MOTD).
    public static func writeParams(_ params: [String], to out: inout [UInt8]) {
        for (i, param) in params.enumerated() { writeParam(param, isLast: i == params.count - 1, to: &out) }
    }

    /// Appends a line whose body `writeBody(source:command:target:params:to:)` made earlier, with
    /// `tags` and CR LF.
    public static func writeLine(tags: [Tag], body: ArraySlice<UInt8>, to out: inout [UInt8]) {
        if !tags.isEmpty {
            out.append(UInt8(ascii: "@"))
            write(tags, to: &out)
            out.append(UInt8(ascii: " "))
        }
        out.append(contentsOf: body)
        out.append(UInt8(ascii: "\r"))
        out.append(UInt8(ascii: "\n"))
    }

    /// Appends one parameter after a space: trailing if it is the last and must be, repaired if it
    /// is not the last and would have to be.
    public static func writeParam(_ param: String, isLast: Bool, to out: inout [UInt8]) {
        if param.utf8.withContiguousStorageIfAvailable({ writeParam(bytes: $0, isLast: isLast, to: &out) }) == nil {
            Array(param.utf8).withUnsafeBufferPointer { writeParam(bytes: $0, isLast: isLast, to: &out) }
        }
    }

    /// `writeParam(_:isLast:to:)` for a parameter already in bytes (`ParamText`).
    public static func writeParam(_ param: ParamText, isLast: Bool, to out: inout [UInt8]) {
        param.bytes.withUnsafeBufferPointer { writeParam(bytes: $0, isLast: isLast, to: &out) }
    }

    private static func writeParam(bytes: UnsafeBufferPointer<UInt8>, isLast: Bool, to out: inout [UInt8]) {
        out.append(UInt8(ascii: " "))
        // A last parameter that is empty, holds a space or starts with ':' must be trailing;
        // a middle one that would need it is repaired rather than corrupting the line.
        let needsTrailing = bytes.isEmpty || bytes[0] == UInt8(ascii: ":") || bytes.contains(UInt8(ascii: " "))
        if !needsTrailing {
            out.append(contentsOf: bytes)
        } else if isLast {
            out.append(UInt8(ascii: ":"))
            out.append(contentsOf: bytes)
        } else {
            writeRepaired(bytes, to: &out)
        }
    }

    /// A middle parameter that cannot stay one: without its leading colons, with spaces made '_',
    /// and `*` if nothing is left (`:` alone wrote nothing before, and shifted the parameters after
    /// it; `::x` stayed `:x`, which reads as trailing). So every parameter keeps its place. Bytewise
    /// is exact: neither byte occurs inside a multi-byte UTF-8 sequence.
    private static func writeRepaired(_ param: UnsafeBufferPointer<UInt8>, to out: inout [UInt8]) {
        let bytes = param.drop(while: { $0 == UInt8(ascii: ":") })
        guard !bytes.isEmpty else { return out.append(UInt8(ascii: "*")) }
        for byte in bytes { out.append(byte == UInt8(ascii: " ") ? UInt8(ascii: "_") : byte) }
    }

    /// Tags as they appear after the `@`: `key=value;key2`, values escaped.
    public static func serializedTags(_ tags: [Tag]) -> String {
        var out: [UInt8] = []
        write(tags, to: &out)
        return String(decoding: out, as: UTF8.self)
    }

    static func write(_ tags: [Tag], to out: inout [UInt8]) {
        for (i, tag) in tags.enumerated() {
            if i > 0 { out.append(UInt8(ascii: ";")) }
            out.appendUTF8(tag.key)
            if !tag.value.isEmpty {
                out.append(UInt8(ascii: "="))
                escapeTagValue(tag.value, to: &out)
            }
        }
    }

    /// IRCv3 message-tags escaping. Every escaped character is ASCII, so bytes are enough (and
    /// "\r\n", one `Character` in Swift, is two escapes as it must be).
    static func escapeTagValue(_ value: String, to out: inout [UInt8]) {
        // Most values need no escape: one pass to find out, then one copy.
        if !value.utf8.contains(where: { $0 == UInt8(ascii: ";") || $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: "\\")
            || $0 == UInt8(ascii: "\r") || $0 == UInt8(ascii: "\n") }) {
            return out.appendUTF8(value)
        }
        for byte in value.utf8 {
            switch byte {
            case UInt8(ascii: ";"): out.append(UInt8(ascii: "\\")); out.append(UInt8(ascii: ":"))
            case UInt8(ascii: " "): out.append(UInt8(ascii: "\\")); out.append(UInt8(ascii: "s"))
            case UInt8(ascii: "\\"): out.append(UInt8(ascii: "\\")); out.append(UInt8(ascii: "\\"))
            case UInt8(ascii: "\r"): out.append(UInt8(ascii: "\\")); out.append(UInt8(ascii: "r"))
            case UInt8(ascii: "\n"): out.append(UInt8(ascii: "\\")); out.append(UInt8(ascii: "n"))
            default: out.append(byte)
            }
        }
    }
}

extension Array where Element == UInt8 {
    /// One copy of the string's UTF-8 bytes (native strings are contiguous; others are walked).
    @inlinable
    public mutating func appendUTF8(_ string: String) {
        if string.utf8.withContiguousStorageIfAvailable({ self.append(contentsOf: $0) }) == nil {
            append(contentsOf: string.utf8)
        }
    }
}

extension Message {
    /// What to do with a line whose body would pass `Limits.lineBytes`.
    public enum Overlong: Sendable {
        /// Cut its last parameter (a relayed line: other servers cut too).
        case cut
        /// Split its last parameter, at spaces where it can, over lines of their own (the
        /// server's own notices, which must arrive whole).
        case split
    }

    /// `writeLine`, keeping every line's body (tags aside) within `Limits.lineBytes`, CR LF
    /// included: clients cut or drop longer lines. Lines after the first carry only the tags
    /// `continuation` keeps (a message id names one line).
    /// `continued`, when given, is added to the second line of a split and every one after it, so
    /// a reader can tell a continuation from a new message with the same tags.
    public func writeLines(to out: inout [UInt8], tags: [Tag], overlong: Overlong, continuation: (Tag) -> Bool, continued: Tag? = nil) {
        let start = out.count
        writeLine(to: &out, tags: tags)
        var bodyStart = start
        if !tags.isEmpty, let space = out[start...].firstIndex(of: UInt8(ascii: " ")) { bodyStart = space + 1 }
        let bodyBytes = out.count - bodyStart
        guard bodyBytes > Limits.lineBytes, let text = params.last, !text.isEmpty else { return }
        out.removeSubrange(start...)
        // Everything but the text: the line as it is less the text's bytes (its ':' stays counted).
        let budget = max(32, Limits.lineBytes - (bodyBytes - text.utf8.count))
        let pieces = overlong == .cut ? [Self.prefix(of: Array(text.utf8)[...], bytes: budget)] : Self.pieces(of: text, bytes: budget)
        let later = tags.filter(continuation) + (continued.map { [$0] } ?? [])
        for (i, piece) in pieces.enumerated() {
            var line = self
            line.params[line.params.count - 1] = String(decoding: piece, as: UTF8.self)
            line.writeLine(to: &out, tags: i == 0 ? tags : later)
        }
    }

    /// The longest start of `bytes` within `limit` that ends on a character boundary.
    public static func prefix(of bytes: ArraySlice<UInt8>, bytes limit: Int) -> ArraySlice<UInt8> {
        guard bytes.count > limit else { return bytes }
        var end = bytes.startIndex + limit
        // Not inside a multi-byte character: back off continuation bytes (10xxxxxx).
        while end > bytes.startIndex && bytes[end] & 0xC0 == 0x80 { end -= 1 }
        return bytes[bytes.startIndex..<end]
    }

    /// `text` in pieces of at most `limit` bytes, broken at the last space that fits where there
    /// is one (the space itself dropped), else at a character boundary.
    static func pieces(of text: String, bytes limit: Int) -> [ArraySlice<UInt8>] {
        let all = Array(text.utf8)
        var rest = all[...]
        var pieces: [ArraySlice<UInt8>] = []
        while rest.count > limit {
            let window = prefix(of: rest, bytes: limit)
            if let space = window.lastIndex(of: UInt8(ascii: " ")), space > window.startIndex {
                pieces.append(rest[rest.startIndex..<space])
                rest = rest[(space + 1)...]
            } else {
                pieces.append(window)
                rest = rest[window.endIndex...]
            }
        }
        if !rest.isEmpty || pieces.isEmpty { pieces.append(rest) }
        return pieces
    }
}
