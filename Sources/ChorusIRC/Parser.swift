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
        // Work on UTF-8 positions: a space followed by a combining mark is one Character in Swift,
        // but on the wire it is still a separator.
        var rest = Substring(line)
        if rest.utf8.contains(where: { $0 == 0 || $0 == 13 || $0 == 10 }) { throw .forbiddenCharacter }
        var tags: [Tag] = []
        if rest.utf8.first == UInt8(ascii: "@") {
            let end = rest.utf8.firstIndex(of: space) ?? rest.endIndex
            let tagText = rest[rest.utf8.index(after: rest.startIndex)..<end]
            if tagText.utf8.count + 2 > Limits.clientTagBytes { throw .tagsTooLong }
            tags = parseTags(tagText)
            rest = rest[end...]
        }
        rest = dropSpaces(rest)
        if rest.utf8.count + 2 > Limits.lineBytes { throw .lineTooLong }

        var source: String?
        if rest.utf8.first == UInt8(ascii: ":") {
            let end = rest.utf8.firstIndex(of: space) ?? rest.endIndex
            source = String(rest[rest.utf8.index(after: rest.startIndex)..<end])
            rest = dropSpaces(rest[end...])
        }
        if rest.isEmpty { throw tags.isEmpty && source == nil ? .empty : .missingCommand }

        let commandEnd = rest.utf8.firstIndex(of: space) ?? rest.endIndex
        let command = rest[..<commandEnd]
        guard command.utf8.allSatisfy({ isLetter($0) }) || (command.utf8.count == 3 && command.utf8.allSatisfy({ $0 >= 48 && $0 <= 57 })) else {
            throw .invalidCommand(String(decoding: command.utf8.prefix(32), as: UTF8.self))
        }
        rest = rest[commandEnd...]

        var params: [String] = []
        while true {
            rest = dropSpaces(rest)
            if rest.isEmpty { break }
            if rest.utf8.first == UInt8(ascii: ":") {
                params.append(String(rest[rest.utf8.index(after: rest.startIndex)...]))
                break
            }
            let end = rest.utf8.firstIndex(of: space) ?? rest.endIndex
            params.append(String(rest[..<end]))
            rest = rest[end...]
        }
        return Message(tags: tags, source: source, command.uppercased(), params)
    }

    private static let space = UInt8(ascii: " ")

    private static func dropSpaces(_ s: Substring) -> Substring {
        guard let start = s.utf8.firstIndex(where: { $0 != space }) else { return s[s.endIndex...] }
        return s[start...]
    }

    private static func isLetter(_ byte: UInt8) -> Bool {
        (byte >= 65 && byte <= 90) || (byte >= 97 && byte <= 122)
    }

    private static func parseTags(_ text: Substring) -> [Tag] {
        var tags: [Tag] = []
        for item in text.utf8.split(separator: UInt8(ascii: ";")) {
            let key: String, value: String
            if let eq = item.firstIndex(of: UInt8(ascii: "=")) {
                key = String(decoding: item[..<eq], as: UTF8.self)
                value = unescapeTagValue(item[item.index(after: eq)...])
            } else {
                key = String(decoding: item, as: UTF8.self)
                value = ""
            }
            if key.isEmpty { continue }
            tags.removeAll { $0.key == key }  // the last occurrence of a key wins
            tags.append(Tag(key, value))
        }
        return tags
    }

    static func unescapeTagValue(_ value: Substring.UTF8View.SubSequence) -> String {
        guard value.contains(UInt8(ascii: "\\")) else { return String(decoding: value, as: UTF8.self) }
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
