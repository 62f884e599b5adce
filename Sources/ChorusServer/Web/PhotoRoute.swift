import ChorusCore
import Foundation
import NIOCore
import NIOHTTP1

/// An uploaded photo (`/photo/<id>.<ext>`) behind the signed link its upload answered with: read
/// from the store beside the Workspace's writer, so every process of a cluster serves it. The
/// picture never changes once kept, so browsers may keep it; it is served as an image and nothing
/// else (no sniffing, no script).
extension WebApplication {
    func photo(_ request: WebRequest) -> EventLoopFuture<WebResponse> {
        let path = request.path, name = request.parameters["file"] ?? ""
        guard let dot = name.firstIndex(of: "."), let id = Int64(name[..<dot]),
              let kind = ImageFile.Kind(fileExtension: String(name[name.index(after: dot)...])) else {
            return loop.makeSucceededFuture(.text(.notFound, "There is no photo at \(path.prefix(80))."))
        }
        return followingLink(request, naming: ["p"]) { fields in
            fields["p"] == String(id) ? photo(id, kind) : tamperedLink
        }
    }

    /// The photo the link names, as stored, if it is still kept and of the kind its name says.
    private func photo(_ id: Int64, _ kind: ImageFile.Kind) -> EventLoopFuture<WebResponse> {
        let store = server.store
        return server.background { try store.photo(id) }.map { photo in
            guard let photo, photo.kind == kind else { return .text(.notFound, "This photo is no longer kept.") }
            var response = WebResponse(status: .ok, body: ByteBuffer(bytes: photo.bytes))
            response.headers.add(name: "Content-Type", value: photo.kind.mediaType)
            response.headers.add(name: "Cache-Control", value: "private, max-age=31536000, immutable")
            response.headers.add(name: "X-Content-Type-Options", value: "nosniff")
            response.headers.add(name: "Content-Security-Policy", value: "default-src 'none'; sandbox")
            return response
        }.recover { .text(.internalServerError, "The photo could not be read: \($0)") }
    }
}
