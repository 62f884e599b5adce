import ChorusCore
import Foundation
import XCTest

/// Pictures known by their bytes and kept without their metadata. The fixtures are a phone's
/// kind of photo, made with Pillow: EXIF with a camera and GPS position (52°22'N 4°53'E), and a
/// JPEG comment and PNG text naming the place.
final class ImageFileTests: XCTestCase {
    static let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("fixtures/photos")

    func fixture(_ name: String) throws -> Data { try Data(contentsOf: Self.fixtures.appendingPathComponent(name)) }

    /// What says where or with what a picture was taken.
    func metadata(in data: Data) -> [String] {
        ["Exif", "eXIf", "EXIF", "PhoneMaker", "taken at home", "Location", "52.375N"].filter { data.range(of: Data($0.utf8)) != nil }
    }

    func testAJPEGLosesItsLocationCameraAndCommentAndKeepsItsPicture() throws {
        let original = try fixture("gps.jpg")
        XCTAssertEqual(metadata(in: original), ["Exif", "PhoneMaker", "taken at home"], "the fixture carries what is to go")
        let (kind, cleaned) = try ImageFile.withoutMetadata(original)
        XCTAssertEqual(kind, .jpeg)
        XCTAssertEqual(metadata(in: cleaned), [])
        let bytes = [UInt8](cleaned)
        XCTAssertEqual(Array(bytes.prefix(4)), [0xFF, 0xD8, 0xFF, 0xE0], "SOI, then JFIF kept")
        XCTAssertEqual(Array(bytes.suffix(2)), [0xFF, 0xD9])
        // The coded picture is the same bytes: from the start of the scan to the end.
        let scan = try XCTUnwrap(original.range(of: Data([0xFF, 0xDA])))
        XCTAssertTrue(cleaned.hasSuffix(original[scan.lowerBound...]))
        XCTAssertLessThan(cleaned.count, original.count)
    }

    func testAPNGLosesItsEXIFAndTextChunks() throws {
        let original = try fixture("gps.png")
        XCTAssertEqual(metadata(in: original), ["eXIf", "PhoneMaker", "Location", "52.375N"])
        let (kind, cleaned) = try ImageFile.withoutMetadata(original)
        XCTAssertEqual(kind, .png)
        XCTAssertEqual(metadata(in: cleaned), [])
        for chunk in ["IHDR", "IDAT", "IEND"] { XCTAssertNotNil(cleaned.range(of: Data(chunk.utf8)), chunk) }
    }

    func testAWebPLosesItsEXIFChunkAndFlag() throws {
        let original = try fixture("gps.webp")
        XCTAssertEqual(metadata(in: original), ["EXIF", "PhoneMaker"])
        let (kind, cleaned) = try ImageFile.withoutMetadata(original)
        XCTAssertEqual(kind, .webp)
        XCTAssertEqual(metadata(in: cleaned), [])
        let b = [UInt8](cleaned)
        let riffSize = Int(b[4]) | Int(b[5]) << 8 | Int(b[6]) << 16 | Int(b[7]) << 24
        XCTAssertEqual(riffSize + 8, b.count, "the RIFF size is the file's")
        XCTAssertEqual(String(decoding: b[12..<16], as: UTF8.self), "VP8X")
        XCTAssertEqual(b[20] & 0x0C, 0, "neither EXIF nor XMP is announced")
        XCTAssertNotNil(cleaned.range(of: Data("VP8 ".utf8)), "the picture stays")
    }

    func testWhatComesAfterAJPEGsEndGoesAndABrokenOneIsRefused() throws {
        let original = try fixture("gps.jpg")
        let (_, cleaned) = try ImageFile.withoutMetadata(original + Data("trailer: 52.375N".utf8))
        XCTAssertEqual(metadata(in: cleaned), [])
        XCTAssertThrowsError(try ImageFile.withoutMetadata(original.prefix(400))) {
            XCTAssertEqual("\($0)", "This JPEG file is cut short or damaged.")
        }
        XCTAssertThrowsError(try ImageFile.withoutMetadata(try fixture("gps.png").prefix(60)))
    }

    func testOnlyTheBytesSayWhatAFileIs() {
        XCTAssertNil(ImageFile.kind(of: Data("GIF89a\u{1}\u{0}\u{1}\u{0}".utf8)))
        XCTAssertNil(ImageFile.kind(of: Data("<html><script>alert(1)</script>".utf8)))
        XCTAssertNil(ImageFile.kind(of: Data("RIFF\u{0}\u{0}\u{0}\u{0}WAVE".utf8)))
        XCTAssertThrowsError(try ImageFile.withoutMetadata(Data("<svg onload=alert(1)>".utf8))) {
            XCTAssertEqual("\($0)", "Only JPEG, PNG and WebP pictures are kept, and this is none of them.")
        }
    }
}

private extension Data {
    func hasSuffix(_ other: Data) -> Bool { count >= other.count && self.suffix(other.count) == other }
}
