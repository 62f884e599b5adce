import AsyncHTTPClient
import ChorusCore
import Foundation
import NIOCore
import NIOPosix
#if canImport(Glibc)
import Glibc
#endif

/// Where a request to a URL someone gave goes (a webhook, a push service): its host resolved and
/// checked once, then connected to as checked (resolve, check, connect to what was checked), so a
/// name that points elsewhere at the moment of connecting cannot reach this machine or its network.
struct OutboundTarget {
    var configuration: HTTPClient.Configuration

    struct Refused: Error, CustomStringConvertible {
        var description: String
    }

    init(_ text: String, allowPrivate: Bool, timeout: TimeAmount) async throws {
        configuration = HTTPClient.Configuration(redirectConfiguration: .disallow,
                                                 timeout: .init(connect: .seconds(5), read: timeout))
        // No spans: nothing here is traced, and a span per request was a twentieth of a delivery's CPU.
        configuration.tracing.tracer = nil
        guard !allowPrivate else { return }
        guard let url = URL(string: text), url.scheme?.lowercased() == "https", let host = url.host else {
            throw Refused(description: "refused: not an https URL")
        }
        let bare = host.hasPrefix("[") ? String(host.dropFirst().dropLast()) : host
        let addresses = try await NIOThreadPool.singleton.runIfActive { Self.resolve(bare) }
        guard let first = addresses.first else { throw Refused(description: "cannot resolve \(host)") }
        guard addresses.allSatisfy(AddressRanges.isPublic) else {
            throw Refused(description: "refused: \(host) is this machine or a private network (\(addresses.first { !AddressRanges.isPublic($0) }!))")
        }
        if first != bare { configuration.dnsOverride = [bare: first] }
    }

    private static func resolve(_ host: String) -> [String] {
        var hints = addrinfo()
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var list: UnsafeMutablePointer<addrinfo>?
        guard getaddrinfo(host, nil, &hints, &list) == 0, let list else { return [] }
        defer { freeaddrinfo(list) }
        var out: [String] = []
        var cursor: UnsafeMutablePointer<addrinfo>? = list
        while let entry = cursor {
            var buffer = [CChar](repeating: 0, count: Int(NI_MAXHOST))
            if getnameinfo(entry.pointee.ai_addr, entry.pointee.ai_addrlen, &buffer, socklen_t(buffer.count), nil, 0, NI_NUMERICHOST) == 0 {
                let address = String(cString: buffer)
                if !out.contains(address) { out.append(address) }
            }
            cursor = entry.pointee.ai_next
        }
        return out
    }
}
