/// A parameter written as UTF-8 bytes while it is interpolated: `"There are \(n) users"` with no
/// `String` made on the way.
///
/// For the lines a server writes on every registration and join (welcome, LUSERS, NAMES): an
/// interpolated `String` past 15 bytes grows on the heap piece by piece, and with the numbers'
/// `description`s that was half of LUSERS' ~23k instructions (callgrind, 1,000 registrations).
public struct ParamText: ExpressibleByStringInterpolation, Sendable {
    public private(set) var bytes: [UInt8]

    public init(stringLiteral literal: StaticString) {
        var interpolation = StringInterpolation(literalCapacity: literal.utf8CodeUnitCount, interpolationCount: 0)
        interpolation.appendLiteral(literal)
        bytes = interpolation.bytes
    }

    public init(stringInterpolation: StringInterpolation) {
        bytes = stringInterpolation.bytes
    }

    /// Empty, for text put together piece by piece (a NAMES line).
    public init(capacity: Int = 0) {
        bytes = []
        bytes.reserveCapacity(capacity)
    }

    public var isEmpty: Bool { bytes.isEmpty }
    public var count: Int { bytes.count }

    public mutating func append(_ string: String) { bytes.appendUTF8(string) }
    public mutating func append(_ byte: UInt8) { bytes.append(byte) }

    public struct StringInterpolation: StringInterpolationProtocol, Sendable {
        var bytes: [UInt8] = []

        public init(literalCapacity: Int, interpolationCount: Int) {
            bytes.reserveCapacity(literalCapacity + 16 * interpolationCount)
        }

        public mutating func appendLiteral(_ literal: StaticString) {
            bytes.append(contentsOf: UnsafeBufferPointer(start: literal.utf8Start, count: literal.utf8CodeUnitCount))
        }

        public mutating func appendInterpolation(_ string: String) {
            bytes.appendUTF8(string)
        }

        public mutating func appendInterpolation(_ number: Int) {
            bytes.appendDecimal(number)
        }
    }
}

extension Array where Element == UInt8 {
    /// `number` in decimal, as `String(number)` would write it.
    mutating func appendDecimal(_ number: Int) {
        // Digits from the last, into room on the stack, then one append.
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 20) { digits in
            var rest = number.magnitude, first = digits.count
            repeat {
                first -= 1
                digits[first] = UInt8(ascii: "0") + UInt8(truncatingIfNeeded: rest % 10)
                rest /= 10
            } while rest > 0
            if number < 0 { append(UInt8(ascii: "-")) }
            append(contentsOf: UnsafeBufferPointer(rebasing: digits[first...]))
        }
    }
}
