import CompressNIO
import Foundation
import NIOCore
import NIOHTTP1

/// Every address the web side serves, in one place. `/socket` is taken by the WebSocket upgrade
/// before a request gets here; what reaches it here is a request that could not be upgraded.
extension IRCServer {
    func webResponse(to request: HTTPRequestHead, body: ByteBuffer?, from peer: SocketAddress?) -> EventLoopFuture<WebResponse> {
        let path = WebRequests.path(of: request.uri)
        if path.hasPrefix("/api/") { return api.respond(to: request, body: body) }
        if path.hasPrefix("/photo/") { return photoResponse(to: request, path: path) }
        switch path {
        case "/health":
            return loop.makeSucceededFuture(.text(.ok, "alive"))
        case "/ready":
            return readiness()
        case "/report.svg":
            return reportResponse(to: request, as: .svg)
        case "/report.csv":
            return reportResponse(to: request, as: .csv)
        case "/jobs.csv":
            return jobSheetResponse(to: request)
        case "/calendar.ics":
            return calendarResponse(to: request)
        case "/metrics":
            return loop.makeSucceededFuture(metricsResponse(for: peer))
        case "/client.json":
            return loop.makeSucceededFuture(webClientSettings())
        case "/socket":
            return loop.makeSucceededFuture(WebSocketUpgrade.refusal(of: request, allowed: config.webOrigins))
        default:
            guard let asset = WebClientFiles.file(at: path) else {
                return loop.makeSucceededFuture(.text(.notFound, "There is nothing at \(path.prefix(200))."))
            }
            return loop.makeSucceededFuture(asset.response(to: request))
        }
    }

    /// Prometheus's scrape: from this machine only, unless `metrics = any` says otherwise.
    private func metricsResponse(for peer: SocketAddress?) -> WebResponse {
        switch config.metrics {
        case .off: return .text(.notFound, "There is nothing at /metrics.")
        case .loopback where !(peer.map(IRCServer.isLoopback) ?? false):
            return .text(.forbidden, "Metrics are served to this machine only (metrics = any in the config opens them).")
        case .loopback, .any:
            var counts: [ServerMetrics.ClientKind: Int] = [:]
            for client in registry.clients.values where !client.closing {
                let kind: ServerMetrics.ClientKind = !client.isTLS ? .plain
                    : (try? client.channel.pipeline.syncOperations.handler(type: WebSocketLines.self)) != nil ? .websocket : .tls
                counts[kind, default: 0] += 1
            }
            var response = WebResponse(status: .ok, body: ByteBuffer(bytes: metrics.exposition(connections: counts, rooms: rooms.count)))
            response.headers.add(name: "Content-Type", value: "text/plain; version=0.0.4; charset=utf-8")
            return response
        }
    }

    static func isLoopback(_ address: SocketAddress) -> Bool {
        switch address {
        case .v4(let v4): return UInt32(bigEndian: v4.address.sin_addr.s_addr) >> 24 == 127
        case .v6: return address.ipAddress == "::1" || address.ipAddress?.hasPrefix("::ffff:127.") == true
        default: return false
        }
    }

    /// What the web client needs to know before it connects: whom it sends `!commands` to.
    private func webClientSettings() -> WebResponse {
        let settings: [String: String] = ["bot": config.serviceNick, "network": config.network]
        let json = ((try? JSONEncoder().encode(settings)) ?? Data("{}".utf8)) + Data("\n".utf8)
        var response = WebResponse(status: .ok, body: ByteBuffer(bytes: json))
        response.headers.add(name: "Content-Type", value: "application/json")
        response.headers.add(name: "Cache-Control", value: "no-cache")
        return response
    }

    /// Ready to serve: the listeners are bound and the store answers a read queued behind every write.
    private func readiness() -> EventLoopFuture<WebResponse> {
        guard listening else { return loop.makeSucceededFuture(.text(.serviceUnavailable, "not listening")) }
        // A store that answers reads but refuses writes (a full disk) is not ready either.
        if let trouble = workspace.writeTrouble {
            return loop.makeSucceededFuture(.text(.serviceUnavailable, "the store refuses writes: \(trouble)"))
        }
        return readAfterWrites { try $0.probe() }
            .map { WebResponse.text(.ok, "ready") }
            .recover { WebResponse.text(.serviceUnavailable, "the store does not answer: \($0)") }
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

/// The web client's files, compiled in (`Package.swift`'s resources). Each is served with a
/// validator, so a browser asks again cheaply and always gets the server's own version.
struct WebClientFiles {
    let bytes: [UInt8]
    /// The same, gzipped once (a phone on a slow network loads a third of the bytes), or nil if
    /// that saves nothing.
    let gzipped: ByteBuffer?
    let contentType: String
    let etag: String

    static let files: [Substring: WebClientFiles] = [
        "/": .init(PackageResources.index_html, "text/html; charset=utf-8"),
        "/irc.js": .init(PackageResources.irc_js, "text/javascript; charset=utf-8"),
        "/chat.js": .init(PackageResources.chat_js, "text/javascript; charset=utf-8"),
        "/jobs.js": .init(PackageResources.jobs_js, "text/javascript; charset=utf-8"),
        "/team.js": .init(PackageResources.team_js, "text/javascript; charset=utf-8"),
        "/app.js": .init(PackageResources.app_js, "text/javascript; charset=utf-8"),
        "/app.css": .init(PackageResources.app_css, "text/css; charset=utf-8"),
        "/icon.svg": .init(PackageResources.icon_svg, "image/svg+xml"),
        "/sw.js": .init(PackageResources.sw_js, "text/javascript; charset=utf-8"),
        "/manifest.webmanifest": .init(PackageResources.manifest_webmanifest, "application/manifest+json"),
    ]

    static func file(at path: Substring) -> WebClientFiles? {
        files[path == "/index.html" ? "/" : path]
    }

    private init(_ bytes: [UInt8], _ contentType: String) {
        self.bytes = bytes
        var plain = ByteBuffer(bytes: bytes)
        let packed = try? plain.compress(with: .gzip(configuration: .init(windowSize: 15, compressionLevel: 9)))
        gzipped = packed.flatMap { $0.readableBytes < bytes.count ? $0 : nil }
        self.contentType = contentType
        // FNV-1a: a validator only has to change when the file does.
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in bytes { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3 }
        etag = "\"\(String(hash, radix: 36))\""
    }

    /// `Accept-Encoding` names gzip, and not with `q=0`.
    static func acceptsGzip(_ request: HTTPRequestHead) -> Bool {
        request.headers[canonicalForm: "Accept-Encoding"].contains { coding in
            let parts = coding.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
            return (parts.first == "gzip" || parts.first == "*") && !parts.dropFirst().contains { $0 == "q=0" || $0 == "q=0.0" || $0 == "q=0.000" }
        }
    }

    func response(to request: HTTPRequestHead) -> WebResponse {
        var response = WebResponse(status: .ok)
        response.headers.add(name: "ETag", value: etag)
        response.headers.add(name: "Cache-Control", value: "no-cache")
        if request.headers[canonicalForm: "If-None-Match"].contains(where: { $0 == etag }) {
            response.status = .notModified
            return response
        }
        response.headers.add(name: "Content-Type", value: contentType)
        if contentType.hasPrefix("text/html") {
            // The page runs its own script and style only, and talks to this server only.
            response.headers.add(name: "Content-Security-Policy",
                                 value: "default-src 'self'; connect-src 'self'; img-src 'self' data:; frame-ancestors 'none'; base-uri 'none'; form-action 'none'")
        }
        // Caches keep each encoding apart.
        response.headers.add(name: "Vary", value: "Accept-Encoding")
        if let gzipped, Self.acceptsGzip(request) {
            response.headers.add(name: "Content-Encoding", value: "gzip")
            response.body = gzipped
        } else {
            response.body = ByteBuffer(bytes: bytes)
        }
        return response
    }
}
