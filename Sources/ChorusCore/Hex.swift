/// Bytes as lowercase hexadecimal: digests, signatures and secrets. Written by table, not with
/// `String(format:)`, which costs a formatter per byte (a webhook's signature is made per event).
public enum Hex {
    private static let digits = Array("0123456789abcdef".utf8)

    public static func lowercase<S: Sequence>(_ bytes: S) -> String where S.Element == UInt8 {
        var out: [UInt8] = []
        out.reserveCapacity(bytes.underestimatedCount * 2)
        for byte in bytes {
            out.append(digits[Int(byte >> 4)])
            out.append(digits[Int(byte & 0xF)])
        }
        return String(decoding: out, as: UTF8.self)
    }
}
