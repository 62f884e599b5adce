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
        var rest = Substring(line)
        if rest.utf8.contains(0) || rest.utf8.contains(UInt8(ascii: "\r")) || rest.utf8.contains(UInt8(ascii: "\n")) {
            throw .forbiddenCharacter
        }
        var tags: [Tag] = []
        if rest.first == "@" {
            let end = rest.firstIndex(of: " ") ?? rest.endIndex
            let tagText = rest[rest.index(after: rest.startIndex)..<end]
            if tagText.utf8.count + 2 > Limits.clientTagBytes { throw .tagsTooLong }
            tags = parseTags(tagText)
            rest = rest[end...]
        }
        rest = rest.drop(while: { $0 == " " })
        if rest.utf8.count + 2 > Limits.lineBytes { throw .lineTooLong }

        var source: String?
        if rest.first == ":" {
            let end = rest.firstIndex(of: " ") ?? rest.endIndex
            source = String(rest[rest.index(after: rest.startIndex)..<end])
            rest = rest[end...].drop(while: { $0 == " " })
        }
        if rest.isEmpty { throw tags.isEmpty && source == nil ? .empty : .missingCommand }

        let commandEnd = rest.firstIndex(of: " ") ?? rest.endIndex
        let command = rest[..<commandEnd]
        guard command.utf8.allSatisfy({ isLetter($0) }) || (command.utf8.count == 3 && command.utf8.allSatisfy({ $0 >= 48 && $0 <= 57 })) else {
            throw .invalidCommand(String(command.prefix(32)))
        }
        rest = rest[commandEnd...]

        var params: [String] = []
        while true {
            rest = rest.drop(while: { $0 == " " })
            if rest.isEmpty { break }
            if rest.first == ":" {
                params.append(String(rest.dropFirst()))
                break
            }
            let end = rest.firstIndex(of: " ") ?? rest.endIndex
            params.append(String(rest[..<end]))
            rest = rest[end...]
        }
        return Message(tags: tags, source: source, command.uppercased(), params)
    }

    private static func isLetter(_ byte: UInt8) -> Bool {
        (byte >= 65 && byte <= 90) || (byte >= 97 && byte <= 122)
    }

    private static func parseTags(_ text: Substring) -> [Tag] {
        var tags: [Tag] = []
        for item in text.split(separator: ";", omittingEmptySubsequences: true) {
            if let eq = item.firstIndex(of: "=") {
                let key = String(item[..<eq])
                if key.isEmpty { continue }
                let value = unescapeTagValue(item[item.index(after: eq)...])
                tags.removeAll { $0.key == key }  // the last occurrence of a key wins
                tags.append(Tag(key, value))
            } else {
                tags.removeAll { $0.key == String(item) }
                tags.append(Tag(String(item), ""))
            }
        }
        return tags
    }

    static func unescapeTagValue(_ value: Substring) -> String {
        guard value.contains("\\") else { return String(value) }
        var out = ""
        var escaping = false
        for ch in value {
            if escaping {
                switch ch {
                case ":": out.append(";")
                case "s": out.append(" ")
                case "r": out.append("\r")
                case "n": out.append("\n")
                default: out.append(ch)  // `\\` and unknown escapes drop the backslash
                }
                escaping = false
            } else if ch == "\\" {
                escaping = true
            } else {
                out.append(ch)
            }
        }
        return out
    }
}
