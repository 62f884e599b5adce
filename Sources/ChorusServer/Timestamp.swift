import Foundation

/// IRCv3 `server-time` stamps (`2026-11-23T06:40:00.123Z`), written without a DateFormatter:
/// every delivered line may carry one, so this is on the hot path.
public enum Timestamp {
    public static func format(_ date: Date) -> String {
        // To the nearest millisecond, as the store keeps times (`Millis.from`): a line's live stamp
        // and the stamp it has when replayed must be the same, or a client asking for history
        // after a stamp gets that line again. Rounding down also read a stored millisecond
        // (`ms / 1000`, a binary fraction a hair below it) as the one before.
        let millis = Int64((date.timeIntervalSince1970 * 1000).rounded())
        var days = millis >= 0 ? millis / 86_400_000 : (millis - 86_399_999) / 86_400_000
        let msOfDay = millis - days * 86_400_000
        // Civil-from-days (Howard Hinnant's algorithm).
        days += 719_468
        let era = (days >= 0 ? days : days - 146_096) / 146_097
        let doe = days - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let day = doy - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        let year = yoe + era * 400 + (month <= 2 ? 1 : 0)
        let h = msOfDay / 3_600_000, m = msOfDay / 60_000 % 60, s = msOfDay / 1000 % 60, ms = msOfDay % 1000
        guard (0...9999).contains(year) else {
            return "\(pad(year, 4))-\(pad(month, 2))-\(pad(day, 2))T\(pad(h, 2)):\(pad(m, 2)):\(pad(s, 2)).\(pad(ms, 3))Z"
        }
        // Digits written in place: interpolating seven padded numbers cost ~8k instructions a stamp.
        return String(unsafeUninitializedCapacity: 24) { out in
            func put(_ value: Int64, _ width: Int, at start: Int, then separator: UInt8) {
                var v = value, i = start + width
                while i > start {
                    i -= 1
                    out[i] = UInt8(truncatingIfNeeded: 48 + v % 10)
                    v /= 10
                }
                out[start + width] = separator
            }
            put(year, 4, at: 0, then: UInt8(ascii: "-"))
            put(month, 2, at: 5, then: UInt8(ascii: "-"))
            put(day, 2, at: 8, then: UInt8(ascii: "T"))
            put(h, 2, at: 11, then: UInt8(ascii: ":"))
            put(m, 2, at: 14, then: UInt8(ascii: ":"))
            put(s, 2, at: 17, then: UInt8(ascii: "."))
            put(ms, 3, at: 20, then: UInt8(ascii: "Z"))
            return 24
        }
    }

    /// `2026-11-23 06:40 UTC`: the stamp of a replayed line for a client without `server-time`.
    static func short(_ date: Date) -> String {
        let stamp = format(date)  // 2026-11-23T06:40:00.000Z
        let utf8 = Array(stamp.utf8)
        guard utf8.count == 24 else { return stamp }
        return String(decoding: utf8[0..<10], as: UTF8.self) + " " + String(decoding: utf8[11..<16], as: UTF8.self) + " UTC"
    }

    /// Reads `2026-11-23T06:40:00.123Z` (fraction optional); nil for anything else.
    static func parse(_ text: String) -> Date? {
        let u = Array(text.utf8)
        guard u.count >= 20, u.last == UInt8(ascii: "Z") else { return nil }
        func num(_ from: Int, _ len: Int) -> Int64? {
            guard from + len <= u.count else { return nil }
            var v: Int64 = 0
            for b in u[from..<from + len] {
                guard b >= 48 && b <= 57 else { return nil }
                v = v * 10 + Int64(b - 48)
            }
            return v
        }
        guard let y = num(0, 4), let mo = num(5, 2), let d = num(8, 2), let h = num(11, 2), let mi = num(14, 2),
              let s = num(17, 2), (1...12).contains(mo), (1...31).contains(d), h < 24, mi < 60, s < 61 else { return nil }
        var ms: Int64 = 0
        if u.count > 20 && u[19] == UInt8(ascii: ".") {
            let digits = u.count - 21
            guard digits > 0, let frac = num(20, digits) else { return nil }
            ms = digits >= 3 ? frac / pow10(digits - 3) : frac * pow10(3 - digits)
        }
        // Days-from-civil.
        let yy = mo <= 2 ? y - 1 : y
        let era = (yy >= 0 ? yy : yy - 399) / 400
        let yoe = yy - era * 400
        let doy = (153 * (mo > 2 ? mo - 3 : mo + 9) + 2) / 5 + d - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        let days = era * 146_097 + doe - 719_468
        let total = ((days * 24 + h) * 60 + mi) * 60 + s
        return Date(timeIntervalSince1970: Double(total) + Double(ms) / 1000)
    }

    private static func pow10(_ n: Int) -> Int64 { (0..<n).reduce(1) { acc, _ in acc * 10 } }

    private static func pad(_ v: Int64, _ width: Int) -> String {
        let s = String(v)
        return s.count >= width ? s : String(repeating: "0", count: width - s.count) + s
    }
}
