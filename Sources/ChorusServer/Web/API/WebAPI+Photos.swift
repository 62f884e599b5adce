import ChorusCore
import ChorusSQL
import Foundation
import MultipartKit
import NIOCore
import NIOHTTP1

/// `POST /api/v1/photos`: a picture uploaded by the token's account (the web client's camera
/// button; any IRC client through `draft/FILEHOST`). The body is the picture itself
/// (`Content-Type: image/jpeg`, `image/png` or `image/webp`: the bytes decide, not the header) or
/// the first file of a `multipart/form-data` form. Its location and camera data are taken out, it
/// is kept in the store, and the answer is `201 Created` with its signed link in `Location`.
extension WebAPI {
    func uploadPhoto(_ caller: Caller, _ request: WebRequest) throws -> EventLoopFuture<WebResponse> {
        guard let links = server.reportLinks else { throw APIError(.notFound, "NOT_FOUND", "Photos are not served here.") }
        guard let body = request.body, body.readableBytes > 0 else {
            throw APIError(.badRequest, "INVALID_PARAMS",
                           "Send the picture as the body (Content-Type: image/jpeg, image/png or image/webp), or as a file in a multipart form.")
        }
        let contentType = request.head.headers.first(name: "Content-Type") ?? ""
        let uploaded = contentType.lowercased().hasPrefix("multipart/form-data") ? try Self.firstFile(of: body, contentType: contentType)
                                                                                 : Data(body.readableBytesView)
        let image: (kind: ImageFile.Kind, bytes: Data)
        do {
            image = try ImageFile.withoutMetadata(uploaded)
        } catch let unreadable as ImageFile.Unreadable {
            throw APIError(.unsupportedMediaType, "INVALID_PARAMS", unreadable.description)
        }
        // To the millisecond, as the store keeps it: the photo's link, which counts from it, is
        // the same read back as made.
        let (store, now) = (server.store, Millis.date(Millis.from(server.now())))
        return server.background { () throws -> Photo in
            guard try store.photosUploaded(by: caller.key, since: now - 86_400) < Photo.perDay else {
                var error = APIError(.tooManyRequests, "RATE_LIMITED", "At most \(Photo.perDay) photos a day from one account.")
                error.retryAfter = 3600
                throw error
            }
            return try store.insertPhoto(Photo(account: caller.key, kind: image.kind, bytes: image.bytes, created: now))
        }.flatMapThrowing { photo in
            let url = links.photo(photo)
            var response = try self.json(.created, APIUpload(id: photo.id, url: url, type: photo.kind.mediaType, bytes: photo.bytes.count))
            response.headers.add(name: "Location", value: url)
            return response
        }
    }

    /// The first part of a form that is a file (or else the first part).
    private static func firstFile(of body: ByteBuffer, contentType: String) throws -> Data {
        guard let boundary = contentType.split(separator: ";").lazy.map({ $0.trimmingCharacters(in: .whitespaces) })
            .first(where: { $0.lowercased().hasPrefix("boundary=") })?.dropFirst("boundary=".count).trimmingCharacters(in: CharacterSet(charactersIn: "\"")),
              !boundary.isEmpty else {
            throw APIError(.badRequest, "INVALID_PARAMS", "A multipart form names its boundary in Content-Type.")
        }
        let parser = MultipartParser(boundary: boundary)
        var parts: [(isFile: Bool, body: ByteBuffer)] = []
        var isFile = false
        var current = ByteBuffer()
        parser.onHeader = { name, value in
            if name.lowercased() == "content-disposition", value.contains("filename=") { isFile = true }
        }
        parser.onBody = { current.writeBuffer(&$0) }
        parser.onPartComplete = {
            parts.append((isFile, current))
            isFile = false
            current = ByteBuffer()
        }
        do {
            try parser.execute(body)
        } catch {
            throw APIError(.badRequest, "INVALID_PARAMS", "The multipart form could not be read.")
        }
        guard let part = parts.first(where: \.isFile) ?? parts.first else {
            throw APIError(.badRequest, "INVALID_PARAMS", "The form holds no file.")
        }
        return Data(part.body.readableBytesView)
    }
}

struct APIUpload: Encodable {
    let id: Int64
    let url: String
    let type: String
    let bytes: Int
}
