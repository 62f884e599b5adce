/// Casemapping and the shapes of names. Chorus advertises `CASEMAPPING=ascii`: only A-Z fold.
public enum Names {
    public static func fold(_ name: String) -> String {
        if !name.utf8.contains(where: { $0 >= 65 && $0 <= 90 }) { return name }
        return String(decoding: name.utf8.map { ($0 >= 65 && $0 <= 90) ? $0 + 32 : $0 }, as: UTF8.self)
    }

    /// Rooms are `#` channels only (ISUPPORT `CHANTYPES=#`).
    public static func isChannel(_ name: String) -> Bool {
        name.utf8.first == UInt8(ascii: "#")
    }

    /// A nick: letters, digits and `[]\`_^{|}-`, not starting with a digit or `-`, at most 30 bytes.
    /// Checked on every NICK and account name: a switch over the bytes, nothing allocated.
    public static func isValidNick(_ nick: String) -> Bool {
        var count = 0
        for byte in nick.utf8 {
            guard isNickByte(byte) else { return false }
            if count == 0 && !canStartNick(byte) { return false }
            count += 1
            if count > Limits.nickLength { return false }
        }
        return count > 0
    }

    /// A byte a nick may hold: letters, digits and `[]\`_^{|}-`.
    public static func isNickByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
             UInt8(ascii: "["), UInt8(ascii: "]"), UInt8(ascii: "\\"), UInt8(ascii: "`"), UInt8(ascii: "_"), UInt8(ascii: "^"),
             UInt8(ascii: "{"), UInt8(ascii: "|"), UInt8(ascii: "}"), UInt8(ascii: "-"):
            return true
        default:
            return false
        }
    }

    /// A nick does not start with a digit or `-`.
    private static func canStartNick(_ byte: UInt8) -> Bool {
        !(UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) && byte != UInt8(ascii: "-")
    }

    /// A channel: `#` and at most 49 more bytes, none of space, comma, BEL or control characters.
    public static func isValidChannel(_ name: String) -> Bool {
        let bytes = name.utf8
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
