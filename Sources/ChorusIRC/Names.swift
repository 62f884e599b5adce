/// Casemapping and the shapes of names. Chorus advertises `CASEMAPPING=ascii`: only A-Z fold.
public enum Names {
    public static func fold(_ name: String) -> String {
        if !name.utf8.contains(where: { $0 >= 65 && $0 <= 90 }) { return name }
        return String(decoding: name.utf8.map { ($0 >= 65 && $0 <= 90) ? $0 + 32 : $0 }, as: UTF8.self)
    }

    public static let channelPrefixes: Set<Character> = ["#"]

    public static func isChannel(_ name: String) -> Bool {
        name.first.map { channelPrefixes.contains($0) } ?? false
    }

    /// A nick: letters, digits and `[]\`_^{|}-`, not starting with a digit or `-`, at most 30 bytes.
    public static func isValidNick(_ nick: String) -> Bool {
        let bytes = Array(nick.utf8)
        guard !bytes.isEmpty, bytes.count <= Limits.nickLength else { return false }
        let special: Set<UInt8> = Set("[]\\`_^{|}".utf8)
        for (i, b) in bytes.enumerated() {
            let letter = (b >= 65 && b <= 90) || (b >= 97 && b <= 122)
            let digit = b >= 48 && b <= 57
            if letter || special.contains(b) { continue }
            if i > 0 && (digit || b == UInt8(ascii: "-")) { continue }
            return false
        }
        return true
    }

    /// A channel: `#` and at most 49 more bytes, none of space, comma, BEL or control characters.
    public static func isValidChannel(_ name: String) -> Bool {
        let bytes = Array(name.utf8)
        guard bytes.count >= 2, bytes.count <= Limits.channelLength, isChannel(name) else { return false }
        return !bytes.contains(where: { $0 <= 32 || $0 == UInt8(ascii: ",") || $0 == 7 })
    }

    /// An account name follows the nick rules, so an account can always be used as a nick.
    public static func isValidAccount(_ name: String) -> Bool { isValidNick(name) }

    /// Matches an IRC wildcard mask (`*` any run, `?` one character), case-insensitively.
    public static func matches(mask: String, _ text: String) -> Bool {
        let p = Array(fold(mask).utf8), s = Array(fold(text).utf8)
        var pi = 0, si = 0, star = -1, mark = 0
        while si < s.count {
            if pi < p.count && (p[pi] == UInt8(ascii: "?") || p[pi] == s[si]) {
                pi += 1; si += 1
            } else if pi < p.count && p[pi] == UInt8(ascii: "*") {
                star = pi; mark = si; pi += 1
            } else if star >= 0 {
                pi = star + 1; mark += 1; si = mark
            } else {
                return false
            }
        }
        while pi < p.count && p[pi] == UInt8(ascii: "*") { pi += 1 }
        return pi == p.count
    }
}
