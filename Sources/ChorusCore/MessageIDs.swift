import Foundation

/// Message ids: unique per server, short, sortable by creation within a run.
public struct MessageIDs: Sendable {
    private var counter: UInt64 = 0
    private let prefix: String

    public init() {
        prefix = String(UInt32.random(in: 0...UInt32.max), radix: 36)
    }

    /// `<ms since 1970>-<prefix>-<counter>`, each number in base 36. Written into the string's own
    /// storage: two `String(_:radix:)`s and three concatenations were ~3.8k instructions an id,
    /// made for every line a room hears.
    public mutating func next(at date: Date) -> String {
        counter &+= 1
        let ms = UInt64(max(0, date.timeIntervalSince1970 * 1000))
        let prefix = self.prefix, counter = self.counter
        return String(unsafeUninitializedCapacity: 2 * 13 + 2 + prefix.utf8.count) { out in
            var n = Self.writeBase36(ms, to: out, at: 0)
            out[n] = UInt8(ascii: "-")
            n += 1
            for byte in prefix.utf8 { out[n] = byte; n += 1 }
            out[n] = UInt8(ascii: "-")
            return Self.writeBase36(counter, to: out, at: n + 1)
        }
    }

    /// Writes `value` in base 36 (lowercase, as `String(_:radix:)`) at `start`; returns the end.
    private static func writeBase36(_ value: UInt64, to out: UnsafeMutableBufferPointer<UInt8>, at start: Int) -> Int {
        var length = 1, rest = value / 36
        while rest > 0 { length += 1; rest /= 36 }
        rest = value
        for i in stride(from: start + length - 1, through: start, by: -1) {
            let digit = UInt8(rest % 36)
            out[i] = digit < 10 ? UInt8(ascii: "0") + digit : UInt8(ascii: "a") + digit - 10
            rest /= 36
        }
        return start + length
    }
}
