import ChorusIRC
import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL
import NIOWebSocket

/// Web connections counted by address, with the IRC ones, against `max-connections-per-ip`.
extension IRCServer {
    /// Counts a web connection for `address` (at its first request), unless the address has
    /// `max-connections-per-ip` already, IRC and web together.
    func admitWebConnection(_ address: String) -> Bool {
        let limit = config.maxConnectionsPerIP
        let open = webConnectionsPerIP[address, default: 0]
        if limit > 0, open + registry.connections(fromIP: address) >= limit { return false }
        webConnectionsPerIP[address] = open + 1
        return true
    }

    func releaseWebConnection(_ address: String) {
        let open = webConnectionsPerIP[address, default: 1] - 1
        webConnectionsPerIP[address] = open > 0 ? open : nil
    }

}

/// What the WebSocket upgrade decides from the request's headers.
enum WebSocketUpgrade {
    /// The first subprotocol the client names that the server speaks, in the client's order of
    /// preference (IRCv3 `websocket`); `.unnamed` when it names none of them.
    static func mode(offered headers: HTTPHeaders) -> WebSocketLines.Mode {
        let offered = headers[canonicalForm: "Sec-WebSocket-Protocol"].map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
        for name in offered {
            switch name {
            case "text.ircv3.net": return .text
            case "binary.ircv3.net": return .binary
            default: continue
            }
        }
        return .unnamed
    }

    /// A browser names the page that opens a socket (`Origin`): a page of this server, or of an origin
    /// the operator listed, may; a page elsewhere may not use a visitor's browser to reach the
    /// server. Programs that are not browsers send no `Origin` and may.
    static func originAllowed(_ headers: HTTPHeaders, allowed: [String]) -> Bool {
        guard let origin = headers.first(name: "Origin")?.lowercased() else { return true }
        if allowed.contains("*") { return true }
        // A page of the same host over HTTPS: the web client itself. Safe against DNS rebinding
        // (a hostile name pointed at this server): the browser would have had to accept this
        // server's certificate for that name, and a plain-HTTP page's origin is `http://`.
        if let host = headers.first(name: "Host")?.lowercased(), origin == "https://\(host)" { return true }
        return allowed.contains { $0.lowercased().trimmingSuffix("/") == origin }
    }
}

extension WebSocketUpgrade {
    /// Why a request to `/socket` was not upgraded, in the status RFC 6455 gives for it.
    static func refusal(of request: HTTPRequestHead, allowed origins: [String]) -> WebResponse {
        let upgrade = request.headers[canonicalForm: "Upgrade"].contains { $0.lowercased() == "websocket" }
        guard upgrade else {
            var response = WebResponse.text(.upgradeRequired, "This address speaks IRC over WebSocket (wss://…/socket).")
            response.headers.add(name: "Upgrade", value: "websocket")
            return response
        }
        guard originAllowed(request.headers, allowed: origins) else {
            return .text(.forbidden, "Pages from \(request.headers.first(name: "Origin") ?? "?") may not connect here.", closes: true)
        }
        guard request.headers.first(name: "Sec-WebSocket-Version") == "13" else {
            var response = WebResponse.text(.upgradeRequired, "Only WebSocket version 13 is spoken here.", closes: true)
            response.headers.add(name: "Sec-WebSocket-Version", value: "13")
            return response
        }
        return .text(.badRequest, "A WebSocket handshake needs a GET with Connection: Upgrade and a Sec-WebSocket-Key.", closes: true)
    }
}

private extension String {
    func trimmingSuffix(_ suffix: String) -> String {
        hasSuffix(suffix) ? String(dropLast(suffix.count)) : self
    }
}

