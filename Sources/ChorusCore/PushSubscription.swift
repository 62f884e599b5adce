import Foundation

/// A device's Web Push subscription (RFC 8030), given by a client with `WEBPUSH REGISTER`
/// (soju.im/webpush): where the push service takes messages for the device, and the keys its
/// messages are encrypted to (RFC 8291). What the account would have been told while none of its
/// connections is open goes there, so a phone hears of it with the app closed.
public struct PushSubscription: Sendable, Equatable {
    public var id: Int64
    /// The owner's account key.
    public var account: String
    /// The push service's URL for this device (an `https://` URL the browser made).
    public var endpoint: String
    /// The device's P-256 public key, uncompressed (65 bytes), and its authentication secret (16 bytes).
    public var p256dh: Data
    public var auth: Data
    public var created: Date

    public init(id: Int64 = 0, account: String, endpoint: String, p256dh: Data, auth: Data, created: Date) {
        self.id = id
        self.account = account
        self.endpoint = endpoint
        self.p256dh = p256dh
        self.auth = auth
        self.created = created
    }

    /// Devices an account may have subscribed at once: a phone, a tablet, a laptop's browsers.
    public static let perAccount = 10
    /// The longest endpoint kept; push services' are under 500 characters.
    public static let maxEndpoint = 1024

    /// What is wrong with a subscription a client offers, if anything: the keys' sizes and an
    /// endpoint that is an `https://` URL on a public host (or, where `allowHTTP`, any `http(s)://`
    /// one, for a push service on a private network).
    public static func problem(endpoint: String, p256dh: Data, auth: Data, allowHTTP: Bool) -> String? {
        guard endpoint.utf8.count <= maxEndpoint, let url = URL(string: endpoint), let scheme = url.scheme?.lowercased(),
              scheme == "https" || (allowHTTP && scheme == "http"), url.host?.isEmpty == false else {
            return allowHTTP ? "The endpoint is not an http(s) URL" : "The endpoint is not an https URL"
        }
        guard allowHTTP || !AddressRanges.isPrivateHost(url.host!) else {
            return "\(url.host!) is this machine or a private network: push services are reached at public addresses only"
        }
        guard p256dh.count == 65, p256dh.first == 4 else { return "p256dh is not an uncompressed P-256 public key (65 bytes, base64url)" }
        guard auth.count == 16 else { return "auth is not a 16-byte secret (base64url)" }
        return nil
    }
}

/// Base64url without padding (RFC 4648 §5), as Web Push writes keys.
public enum Base64URL {
    public static func encode(_ data: Data) -> String {
        data.base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    public static func decode(_ text: String) -> Data? {
        var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        base64 = base64.trimmingCharacters(in: CharacterSet(charactersIn: "="))
        base64 += String(repeating: "=", count: (4 - base64.count % 4) % 4)
        return Data(base64Encoded: base64)
    }
}
