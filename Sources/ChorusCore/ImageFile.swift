import Foundation

/// The pictures Chorus keeps (JPEG, PNG, WebP), known by their bytes and never by a name or a
/// declared type, and their metadata taken out before they are stored: a phone's photo carries
/// where it was taken (EXIF GPS), the camera's serial number and the owner's name, which a proof
/// of work shown to a room must not.
///
/// What goes: JPEG's APP1 (EXIF, XMP), APP13 (IPTC), other application segments but JFIF, an ICC
/// profile and Adobe's, comments, and anything after the image's end; PNG's `eXIf`, text and time
/// chunks; WebP's `EXIF` and `XMP ` chunks (and their flags). The image data itself is copied byte
/// for byte: nothing is decoded or re-encoded.
public enum ImageFile {
    public enum Kind: String, Sendable, CaseIterable {
        case jpeg, png, webp

        public var mediaType: String { "image/\(rawValue)" }
        public var fileExtension: String { rawValue == "jpeg" ? "jpg" : rawValue }

        public init?(fileExtension: String) {
            switch fileExtension.lowercased() {
            case "jpg", "jpeg": self = .jpeg
            case "png": self = .png
            case "webp": self = .webp
            default: return nil
            }
        }
    }

    /// The bytes are not an image of a kind kept here, or not a whole one.
    public struct Unreadable: Error, Equatable, CustomStringConvertible {
        public let description: String
        init(_ description: String) { self.description = description }

        static let notAnImage = Unreadable("Only JPEG, PNG and WebP pictures are kept, and this is none of them.")
        static func broken(_ kind: Kind) -> Unreadable { Unreadable("This \(kind.rawValue.uppercased()) file is cut short or damaged.") }
    }

    /// The kind the first bytes say, if any.
    public static func kind(of data: Data) -> Kind? {
        let b = [UInt8](data.prefix(12))
        if b.starts(with: [0xFF, 0xD8, 0xFF]) { return .jpeg }
        if b.starts(with: [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) { return .png }
        if b.count == 12, b.starts(with: Array("RIFF".utf8)), Array(b[8..<12]) == Array("WEBP".utf8) { return .webp }
        return nil
    }

    /// The image with its metadata taken out.
    public static func withoutMetadata(_ data: Data) throws -> (kind: Kind, bytes: Data) {
        guard let kind = kind(of: data) else { throw Unreadable.notAnImage }
        let bytes = [UInt8](data)
        switch kind {
        case .jpeg: return (kind, Data(try jpeg(bytes)))
        case .png: return (kind, Data(try png(bytes)))
        case .webp: return (kind, Data(try webp(bytes)))
        }
    }

    // MARK: JPEG: segments up to each scan, the scans as they are, nothing after the end

    /// Application segments kept: JFIF (APP0), an ICC profile (APP2 `ICC_PROFILE`), Adobe's (APP14),
    /// which say how to read the colours. Every other APPn and comments go.
    private static func keeps(jpegSegment marker: UInt8, _ payload: ArraySlice<UInt8>) -> Bool {
        switch marker {
        case 0xE0, 0xEE: return true
        case 0xE2: return payload.starts(with: Array("ICC_PROFILE".utf8))
        case 0xE1, 0xE3...0xED, 0xEF, 0xFE: return false
        default: return true
        }
    }

    private static func jpeg(_ b: [UInt8]) throws -> [UInt8] {
        var out: [UInt8] = [0xFF, 0xD8]
        out.reserveCapacity(b.count)
        var i = 2
        while true {
            guard i + 1 < b.count, b[i] == 0xFF else { throw Unreadable.broken(.jpeg) }
            var marker = b[i + 1]
            while marker == 0xFF {  // fill bytes before a marker
                i += 1
                guard i + 1 < b.count else { throw Unreadable.broken(.jpeg) }
                marker = b[i + 1]
            }
            if marker == 0xD9 { out += [0xFF, 0xD9]; return out }  // the end: a trailer after it goes too
            if (0xD0...0xD7).contains(marker) || marker == 0x01 { out += [0xFF, marker]; i += 2; continue }
            guard i + 3 < b.count else { throw Unreadable.broken(.jpeg) }
            let length = Int(b[i + 2]) << 8 | Int(b[i + 3])
            let end = i + 2 + length
            guard length >= 2, end <= b.count else { throw Unreadable.broken(.jpeg) }
            if keeps(jpegSegment: marker, b[(i + 4)..<end]) { out += b[i..<end] }
            i = end
            guard marker == 0xDA else { continue }
            // A scan's coded data runs to the next marker that is not a stuffed 0xFF00 or a restart.
            var j = i
            while j + 1 < b.count, !(b[j] == 0xFF && b[j + 1] != 0x00 && !(0xD0...0xD7).contains(b[j + 1])) { j += 1 }
            guard j + 1 < b.count else { throw Unreadable.broken(.jpeg) }
            out += b[i..<j]
            i = j
        }
    }

    // MARK: PNG: every chunk but metadata, up to IEND

    private static let pngMetadata: Set<String> = ["eXIf", "tEXt", "zTXt", "iTXt", "tIME"]

    private static func png(_ b: [UInt8]) throws -> [UInt8] {
        var out = Array(b[0..<8])
        var i = 8
        while true {
            guard i + 12 <= b.count else { throw Unreadable.broken(.png) }
            let length = Int(b[i]) << 24 | Int(b[i + 1]) << 16 | Int(b[i + 2]) << 8 | Int(b[i + 3])
            let end = i + 12 + length
            guard length >= 0, end <= b.count else { throw Unreadable.broken(.png) }
            let type = String(decoding: b[(i + 4)..<(i + 8)], as: UTF8.self)
            if !pngMetadata.contains(type) { out += b[i..<end] }
            i = end
            if type == "IEND" { return out }
        }
    }

    // MARK: WebP: RIFF chunks but EXIF and XMP, the extended header's flags told so

    private static func webp(_ b: [UInt8]) throws -> [UInt8] {
        var chunks: [UInt8] = []
        var i = 12
        let riffEnd = min(b.count, 8 + Int(littleEndian: b, at: 4))
        while i + 8 <= riffEnd {
            let fourCC = String(decoding: b[i..<(i + 4)], as: UTF8.self)
            let size = Int(littleEndian: b, at: i + 4)
            let end = i + 8 + size + size % 2  // chunks are padded to an even length
            guard end <= riffEnd || (end == riffEnd + 1 && size % 2 == 1) else { throw Unreadable.broken(.webp) }
            if fourCC != "EXIF" && fourCC != "XMP " {
                var chunk = Array(b[i..<min(end, b.count)])
                if chunk.count < end - i { chunk.append(0) }
                if fourCC == "VP8X", chunk.count > 8 { chunk[8] &= ~UInt8(0x08 | 0x04) }  // no EXIF, no XMP
                chunks += chunk
            }
            i = end
        }
        guard !chunks.isEmpty else { throw Unreadable.broken(.webp) }
        let size = UInt32(4 + chunks.count)
        return Array("RIFF".utf8) + withUnsafeBytes(of: size.littleEndian, Array.init) + Array("WEBP".utf8) + chunks
    }
}

private extension Int {
    init(littleEndian b: [UInt8], at i: Int) {
        self = Int(b[i]) | Int(b[i + 1]) << 8 | Int(b[i + 2]) << 16 | Int(b[i + 3]) << 24
    }
}
