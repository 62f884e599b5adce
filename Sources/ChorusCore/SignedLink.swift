import Crypto
import Foundation

/// Links that can be pasted into a chat without opening anyone's data to the world: the address's
/// fields and an expiry, signed with the server's key (HMAC-SHA256). Whoever holds the link sees
/// what it names until it expires; changing any field breaks the signature.
public struct LinkSigner: Sendable {
    private let key: SymmetricKey

    public enum Refusal: Error, Equatable, CustomStringConvertible {
        case tampered
        case expired

        public var description: String {
            switch self {
            case .tampered: "This link is not one the server made (or it was changed)."
            case .expired: "This link has expired: ask for the report again for a new one."
            }
        }
    }

    public init(key: Data) {
        self.key = SymmetricKey(data: key)
    }

    /// A new random key, for a server's first start.
    public static func newKey() -> Data {
        SymmetricKey(size: .bits256).withUnsafeBytes { Data($0) }
    }

    /// The query of a signed link: the fields in order, then `exp` and `sig`.
    public func sign(_ fields: [(String, String)], expires: Date) -> String {
        let unsigned = (fields + [("exp", String(Int(expires.timeIntervalSince1970)))])
            .map { "\($0)=\(Self.escape($1))" }.joined(separator: "&")
        return unsigned + "&sig=" + signature(of: unsigned)
    }

    /// The fields of a link this signer made and that has not expired.
    public func verify(_ query: String, now: Date) throws -> [String: String] {
        guard let range = query.range(of: "&sig=", options: .backwards) else { throw Refusal.tampered }
        let unsigned = String(query[..<range.lowerBound])
        let given = Data(query[range.upperBound...].utf8)
        // Compared in constant time: a guesser learns nothing from how long a refusal takes.
        guard given.count == 32, Data(signature(of: unsigned).utf8).withUnsafeBytes({ expected in
            given.withUnsafeBytes { zip(expected, $0).reduce(UInt8(0)) { $0 | ($1.0 ^ $1.1) } == 0 }
        }) else { throw Refusal.tampered }
        var fields: [String: String] = [:]
        for pair in unsigned.split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard parts.count == 2 else { throw Refusal.tampered }
            fields[String(parts[0])] = String(parts[1]).removingPercentEncoding ?? String(parts[1])
        }
        guard let expiry = fields["exp"].flatMap(TimeInterval.init) else { throw Refusal.tampered }
        guard now.timeIntervalSince1970 < expiry else { throw Refusal.expired }
        return fields
    }

    /// 128 bits of the HMAC, in hex: enough against forgery, short enough for a chat line.
    private func signature(of text: String) -> String {
        Hex.lowercase(HMAC<SHA256>.authenticationCode(for: Data(text.utf8), using: key).prefix(16))
    }

    private static let unreserved = CharacterSet(charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")

    private static func escape(_ value: String) -> String {
        value.addingPercentEncoding(withAllowedCharacters: unreserved) ?? value
    }
}
