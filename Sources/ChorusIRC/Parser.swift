/// Why a line could not be read as a message.
public enum ParseError: Error, Equatable, Sendable {
    case empty
    case missingCommand
    case invalidCommand(String)
    case tagsTooLong
    case lineTooLong
    case forbiddenCharacter
}

extension Message {
    /// Parses one line (without CR LF). Total: any input yields a message or a `ParseError`.
    public static func parse(_ line: String) throws(ParseError) -> Message {
        // Work on the UTF-8 bytes: a space followed by a combining mark is one Character in Swift,
        // but on the wire it is still a separator. (Bytes and offsets, not Substring indices: a
        // quarter of the instructions, callgrind.)
        var line = line
        return try line.withUTF8 { bytes in Result { () throws(ParseError) in try parse(bytes) } }.get()
    }

    private typealias Bytes = Slice<UnsafeBufferPointer<UInt8>>

    private static func parse(_ line: UnsafeBufferPointer<UInt8>) throws(ParseError) -> Message {
        if line.contains(where: { $0 == 0 || $0 == 13 || $0 == 10 }) { throw .forbiddenCharacter }
        var rest = line[...]
        var tags: [Tag] = []
        if rest.first == UInt8(ascii: "@") {
            let end = rest.firstIndex(of: space) ?? rest.endIndex
            let tagText = rest[(rest.startIndex + 1)..<end]
            if tagText.count + 2 > Limits.clientTagBytes { throw .tagsTooLong }
            tags = parseTags(tagText)
            rest = rest[end...]
        }
        rest = dropSpaces(rest)
        if rest.count + 2 > Limits.lineBytes { throw .lineTooLong }

        var source: String?
        if rest.first == UInt8(ascii: ":") {
            let end = rest.firstIndex(of: space) ?? rest.endIndex
            source = string(rest[(rest.startIndex + 1)..<end])
            rest = dropSpaces(rest[end...])
        }
        if rest.isEmpty { throw tags.isEmpty && source == nil ? .empty : .missingCommand }

        let commandEnd = rest.firstIndex(of: space) ?? rest.endIndex
        let command = rest[..<commandEnd]
        guard command.allSatisfy({ isLetter($0) }) || (command.count == 3 && command.allSatisfy({ $0 >= 48 && $0 <= 57 })) else {
            throw .invalidCommand(string(command.prefix(32)))
        }
        rest = rest[commandEnd...]

        var params: [String] = []
        while true {
            rest = dropSpaces(rest)
            if rest.isEmpty { break }
            if rest.first == UInt8(ascii: ":") {
                params.append(string(rest.dropFirst()))
                break
            }
            let end = rest.firstIndex(of: space) ?? rest.endIndex
            params.append(string(rest[..<end]))
            rest = rest[end...]
        }
        // Verbs are ASCII letters (checked above): upper-case them bytewise, without a copy when they already are.
        let verb = command.contains(where: { $0 >= 97 }) ? String(decoding: command.map { $0 >= 97 ? $0 - 32 : $0 }, as: UTF8.self)
                                                        : string(command)
        return Message(tags: tags, source: source, verb, params)
    }

    private static let space = UInt8(ascii: " ")

    private static func string(_ bytes: Bytes) -> String {
        String(decoding: UnsafeBufferPointer(rebasing: bytes), as: UTF8.self)
    }

    private static func dropSpaces(_ s: Bytes) -> Bytes {
        guard let start = s.firstIndex(where: { $0 != space }) else { return s[s.endIndex...] }
        return s[start...]
    }

    private static func isLetter(_ byte: UInt8) -> Bool {
        (byte >= 65 && byte <= 90) || (byte >= 97 && byte <= 122)
    }

    private static func parseTags(_ text: Bytes) -> [Tag] {
        var tags: [Tag] = []
        for item in text.split(separator: UInt8(ascii: ";")) {
            let key: String, value: String
            if let eq = item.firstIndex(of: UInt8(ascii: "=")) {
                key = string(item[..<eq])
                value = unescapeTagValue(item[(eq + 1)...])
            } else {
                key = string(item)
                value = ""
            }
            if key.isEmpty { continue }
            tags.removeAll { $0.key == key }  // the last occurrence of a key wins
            tags.append(Tag(key, value))
        }
        return tags
    }

    private static func unescapeTagValue(_ value: Bytes) -> String {
        guard value.contains(UInt8(ascii: "\\")) else { return string(value) }
        var out: [UInt8] = []
        out.reserveCapacity(value.count)
        var escaping = false
        for byte in value {
            if escaping {
                switch byte {
                case UInt8(ascii: ":"): out.append(UInt8(ascii: ";"))
                case UInt8(ascii: "s"): out.append(UInt8(ascii: " "))
                case UInt8(ascii: "r"): out.append(13)
                case UInt8(ascii: "n"): out.append(10)
                default: out.append(byte)  // `\\` and unknown escapes drop the backslash
                }
                escaping = false
            } else if byte == UInt8(ascii: "\\") {
                escaping = true
            } else {
                out.append(byte)
            }
        }
        return String(decoding: out, as: UTF8.self)
    }
}
