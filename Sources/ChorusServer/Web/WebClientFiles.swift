import CompressNIO
import NIOCore
import NIOHTTP1

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
