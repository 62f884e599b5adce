import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Which addresses a request the server makes on someone's behalf (a webhook) may reach: the
/// public internet only, unless the operator allows the rest. Loopback, private, link-local,
/// shared (CGNAT), multicast, documentation and unspecified addresses would let a room manager
/// probe the machine and its network (server-side request forgery).
public enum AddressRanges {
    /// Whether `text` is an IPv4 or IPv6 address (not a name).
    public static func isAddress(_ text: String) -> Bool {
        var v4 = in_addr(), v6 = in6_addr()
        return inet_pton(AF_INET, text, &v4) == 1 || inet_pton(AF_INET6, text, &v6) == 1
    }

    /// Whether a URL's host names this machine or a private network by itself: a literal address
    /// that is not public, or a name only a local resolver knows (`localhost`, `.local`,
    /// `.internal`). A public-looking name may still resolve to one: that is checked when it is
    /// reached (`OutboundTarget`).
    public static func isPrivateHost(_ host: String) -> Bool {
        let bare = host.hasPrefix("[") ? String(host.dropFirst().dropLast()) : host
        let name = bare.lowercased().trimmingCharacters(in: CharacterSet(charactersIn: "."))
        return name == "localhost" || name.hasSuffix(".localhost") || name.hasSuffix(".local") || name.hasSuffix(".internal")
            || (isAddress(name) && !isPublic(name))
    }

    /// Whether `address` (dotted IPv4 or IPv6 text) is a public unicast address; false for text
    /// that is not an address.
    public static func isPublic(_ address: String) -> Bool {
        var v4 = in_addr()
        if inet_pton(AF_INET, address, &v4) == 1 {
            return isPublic(v4: UInt32(bigEndian: v4.s_addr))
        }
        var v6 = in6_addr()
        guard inet_pton(AF_INET6, address, &v6) == 1 else { return false }
        let b = withUnsafeBytes(of: &v6) { Array($0) }
        // An IPv4 address in IPv6 clothes (::ffff:a.b.c.d, ::a.b.c.d, 64:ff9b::a.b.c.d) is that address.
        if b[0..<10].allSatisfy({ $0 == 0 }) && ((b[10] == 0xff && b[11] == 0xff) || (b[10] == 0 && b[11] == 0)) {
            return isPublic(v4: UInt32(b[12]) << 24 | UInt32(b[13]) << 16 | UInt32(b[14]) << 8 | UInt32(b[15]))
        }
        if b[0] == 0x00 && b[1] == 0x64 && b[2] == 0xff && b[3] == 0x9b {
            return isPublic(v4: UInt32(b[12]) << 24 | UInt32(b[13]) << 16 | UInt32(b[14]) << 8 | UInt32(b[15]))
        }
        if b[0] & 0xe0 != 0x20 { return false }  // global unicast is 2000::/3 only
        if b[0] == 0x20 && b[1] == 0x01 && b[2] == 0x0d && b[3] == 0xb8 { return false }  // 2001:db8::/32, documentation
        return true
    }

    private static func isPublic(v4 a: UInt32) -> Bool {
        let blocked: [(UInt32, Int)] = [
            (0x0000_0000, 8), (0x0a00_0000, 8), (0x6440_0000, 10), (0x7f00_0000, 8), (0xa9fe_0000, 16), (0xac10_0000, 12),
            (0xc000_0000, 24), (0xc000_0200, 24), (0xc058_6300, 24), (0xc0a8_0000, 16), (0xc612_0000, 15), (0xc633_6400, 24),
            (0xcb00_7100, 24), (0xe000_0000, 4), (0xf000_0000, 4),
        ]
        return !blocked.contains { network, bits in a >> (32 - bits) == network >> (32 - bits) }
    }
}
