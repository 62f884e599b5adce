import Foundation
import NIOCore
import NIOHTTP1

/// The PROXY protocol header (HAProxy's `send-proxy` and `send-proxy-v2`) that a TCP balancer
/// puts before a connection's own bytes: the client's address, which the server would otherwise
/// not see behind it. Version 1 is a line of text, version 2 a binary block; both are read here.
/// https://www.haproxy.org/download/2.9/doc/proxy-protocol.txt
enum ProxyHeader: Equatable {
    /// The client's address, as text.
    case client(String)
    /// The balancer speaking for itself (a health check: v2 LOCAL, v1 UNKNOWN): its own address stands.
    case balancer

    enum Parse: Equatable {
        case needMore
        case found(ProxyHeader, length: Int)
        case invalid(String)
    }

    /// The longest header read: v1's is at most 107 bytes; v2's addresses take 216 at most, and
    /// what a balancer adds after them (TLVs) is skipped up to this length.
    static let maxLength = 1024
    private static let v2Signature: [UInt8] = [0x0D, 0x0A, 0x0D, 0x0A, 0x00, 0x0D, 0x0A, 0x51, 0x55, 0x49, 0x54, 0x0A]

    /// Reads a header at the start of `bytes`.
    static func parse(_ bytes: ByteBufferView) -> Parse {
        let prefix = Array(bytes.prefix(12))
        if prefix.count < 12 {
            let v1 = Array("PROXY ".utf8)
            if !v2Signature.starts(with: prefix) && !v1.starts(with: prefix.prefix(v1.count)) {
                return .invalid("not a PROXY protocol header")
            }
            return .needMore
        }
        return prefix == v2Signature ? parseV2(Array(bytes.prefix(maxLength))) : parseV1(Array(bytes.prefix(108)))
    }

    /// `PROXY TCP4 203.0.113.7 192.0.2.1 51234 6697\r\n`, or `PROXY UNKNOWN …\r\n`.
    private static func parseV1(_ bytes: [UInt8]) -> Parse {
        guard bytes.starts(with: Array("PROXY ".utf8)) else { return .invalid("not a PROXY protocol header") }
        guard let cr = bytes.firstIndex(of: 0x0D) else {
            return bytes.count >= 107 ? .invalid("PROXY header longer than 107 bytes") : .needMore
        }
        guard cr + 1 < bytes.count else { return .needMore }
        guard bytes[cr + 1] == 0x0A else { return .invalid("PROXY header without CR LF") }
        let fields = String(decoding: bytes[..<cr], as: UTF8.self).split(separator: " ", omittingEmptySubsequences: false)
        if fields.count >= 2, fields[1] == "UNKNOWN" { return .found(.balancer, length: cr + 2) }
        guard fields.count == 6, fields[1] == "TCP4" || fields[1] == "TCP6" else { return .invalid("PROXY header not TCP4, TCP6 or UNKNOWN") }
        let source = String(fields[2])
        switch (fields[1], try? SocketAddress(ipAddress: source, port: 0)) {
        case ("TCP4", .v4?), ("TCP6", .v6?): break
        default: return .invalid("PROXY header with a bad address")
        }
        guard let port = Int(fields[4]), (0...65535).contains(port) else { return .invalid("PROXY header with a bad port") }
        return .found(.client(source), length: cr + 2)
    }

    /// The signature, version and command, family, length, then the addresses.
    private static func parseV2(_ bytes: [UInt8]) -> Parse {
        guard bytes.count >= 16 else { return .needMore }
        let versionCommand = bytes[12], family = bytes[13]
        let length = Int(bytes[14]) << 8 | Int(bytes[15])
        guard versionCommand >> 4 == 2 else { return .invalid("PROXY header of an unknown version") }
        guard 16 + length <= maxLength else { return .invalid("PROXY header longer than \(maxLength) bytes") }
        guard bytes.count >= 16 + length else { return .needMore }
        switch versionCommand & 0x0F {
        case 0: return .found(.balancer, length: 16 + length)  // LOCAL
        case 1: break  // PROXY
        default: return .invalid("PROXY header with an unknown command")
        }
        let body = bytes[16..<(16 + length)]
        switch family >> 4 {
        case 1 where length >= 12:  // AF_INET: source, destination, ports
            let a = Array(body.prefix(4))
            return .found(.client("\(a[0]).\(a[1]).\(a[2]).\(a[3])"), length: 16 + length)
        case 2 where length >= 36:  // AF_INET6
            var address = sockaddr_in6()
            withUnsafeMutableBytes(of: &address.sin6_addr) { $0.copyBytes(from: body.prefix(16)) }
            address.sin6_family = sa_family_t(AF_INET6)
            guard let text = SocketAddress(address, host: "").ipAddress else { return .invalid("PROXY header with a bad address") }
            return .found(.client(text), length: 16 + length)
        case 0: return .found(.balancer, length: 16 + length)  // AF_UNSPEC
        default: return .invalid("PROXY header of an unknown address family")
        }
    }
}

/// Reads the PROXY header of a connection from a trusted balancer before anything else sees its
/// bytes (TLS included), tells `found` the client's address, and only then lets the connection
/// become active; a connection that does not start with a valid header is closed.
final class ProxyHeaderHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer

    private var buffer: ByteBuffer?
    private var active = false
    private var done = false
    private let found: (ProxyHeader) -> Void

    init(found: @escaping (ProxyHeader) -> Void) {
        self.found = found
    }

    func channelActive(context: ChannelHandlerContext) {
        active = true  // held back until the header is read: the connection's address is not known yet
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !done else { return context.fireChannelRead(data) }
        var bytes = unwrapInboundIn(data)
        if var held = buffer {
            held.writeBuffer(&bytes)
            bytes = held
        }
        switch ProxyHeader.parse(bytes.readableBytesView) {
        case .needMore:
            guard bytes.readableBytes < ProxyHeader.maxLength else { return context.close(promise: nil) }
            buffer = bytes
        case .invalid:
            context.close(promise: nil)
        case .found(let header, let length):
            done = true
            buffer = nil
            bytes.moveReaderIndex(forwardBy: length)
            found(header)
            if active { context.fireChannelActive() }
            if bytes.readableBytes > 0 { context.fireChannelRead(wrapInboundOut(bytes)) }
            context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
        }
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        if done { context.fireChannelReadComplete() }
    }

    func channelInactive(context: ChannelHandlerContext) {
        // Closed before its header came, the rest of the pipeline never saw it begin.
        if done { context.fireChannelInactive() }
    }
}

/// The client's address a PROXY header gave, for the handlers of a web connection made after it
/// was read (the request handler, the IRC client after a WebSocket upgrade).
final class ProxiedAddress {
    var address: String?
    /// The connection comes from a configured balancer, which names the client in a PROXY header.
    var expected = false
    /// The connection comes from a configured HTTP proxy (`web-proxy-from`), which names the client
    /// of each request in its headers: requests of different people may share the connection.
    var forwarding: Set<String>?

    /// The address to judge a request by: the client's, or the connection's own. Nil for a
    /// request an untrusted proxy passed on (it names a client in a forwarding header): whoever it
    /// is, it is not the proxy's machine (`/metrics` is refused to it).
    func peer(of channel: Channel, head: HTTPRequestHead? = nil) -> SocketAddress? {
        if let address { return try? SocketAddress(ipAddress: address, port: 0) }
        if let head {
            if let forwarding, let client = Self.forwardedClient(head.headers, trusting: forwarding) {
                return try? SocketAddress(ipAddress: client, port: 0)
            }
            if forwarding == nil, head.headers.contains(name: "Forwarded") || head.headers.contains(name: "X-Forwarded-For") {
                return nil
            }
        }
        return channel.remoteAddress
    }

    /// The client a proxy names: the last address of `Forwarded`'s `for=` (or else of
    /// `X-Forwarded-For`) that is not one of the trusted proxies themselves, each proxy having
    /// appended the address it heard from. What the client wrote there itself comes before and
    /// is passed over; nil when no header gives an IP address.
    static func forwardedClient(_ headers: HTTPHeaders, trusting proxies: Set<String>) -> String? {
        var hops: [String] = []
        let forwarded = headers[canonicalForm: "Forwarded"]
        if !forwarded.isEmpty {
            for element in forwarded {
                for pair in element.split(separator: ";") {
                    let parts = pair.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
                    if parts.count == 2, parts[0].lowercased() == "for" { hops.append(parts[1]) }
                }
            }
        } else {
            hops = headers[canonicalForm: "X-Forwarded-For"].map { $0.trimmingCharacters(in: .whitespaces) }
        }
        let addresses = hops.map(Self.bareAddress).map { text in
            (try? SocketAddress(ipAddress: text, port: 0)).map(IRCServer.text(of:))
        }
        guard let last = addresses.lastIndex(where: { $0 == nil || !proxies.contains($0!) }) else {
            return addresses.first ?? nil  // every hop a trusted proxy: the first of them
        }
        return addresses[last]
    }

    /// `"[2001:db8::1]:4711"` → `2001:db8::1`, `192.0.2.60:80` → `192.0.2.60`.
    private static func bareAddress(_ hop: String) -> String {
        var text = hop.trimmingCharacters(in: CharacterSet(charactersIn: "\" "))
        if text.hasPrefix("["), let end = text.firstIndex(of: "]") {
            return String(text[text.index(after: text.startIndex)..<end])
        }
        if text.filter({ $0 == ":" }).count == 1, let colon = text.firstIndex(of: ":") { text = String(text[..<colon]) }
        return text
    }
}
