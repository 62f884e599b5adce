import ChorusCore
import Foundation

/// Times are stored as integer milliseconds since 1970: exact, sortable, and compact.
public enum Millis {
    public static func from(_ date: Date) -> Int64 { Int64((date.timeIntervalSince1970 * 1000).rounded()) }
    public static func date(_ millis: Int64) -> Date { Date(timeIntervalSince1970: Double(millis) / 1000) }
}

/// How values that have no column type of their own are written into a text column, the same in
/// every store (SQLite's and PostgreSQL's), so a row means one thing wherever it is kept.
public enum StoredForm {
    private static let encoder = JSONEncoder()
    private static let decoder = JSONDecoder()

    public static func encode<T: Encodable>(_ value: T) -> String {
        (try? encoder.encode(value)).map { String(decoding: $0, as: UTF8.self) } ?? "null"
    }

    public static func decode<T: Decodable>(_ type: T.Type, _ text: String) -> T? {
        try? decoder.decode(type, from: Data(text.utf8))
    }

    /// Lists are mostly empty (a job's tasks and photos): skip the decoder for those.
    public static func decodeList<T: Decodable>(_ type: [T].Type, _ text: String) -> [T] {
        text == "[]" ? [] : decode(type, text) ?? []
    }

    // An event's fields are flat strings, written here by hand as bytes: JSONEncoder cost more than
    // the INSERT, and joining Strings ~16k instructions an event (callgrind, `commands`).
    public static func json(_ list: [String]) -> String {
        var out: [UInt8] = [UInt8(ascii: "[")]
        for (i, item) in list.enumerated() {
            if i > 0 { out.append(UInt8(ascii: ",")) }
            writeQuoted(item, to: &out)
        }
        out.append(UInt8(ascii: "]"))
        return String(decoding: out, as: UTF8.self)
    }

    public static func json(_ object: [String: String]) -> String {
        var out: [UInt8] = [UInt8(ascii: "{")]
        out.reserveCapacity(128)
        for (i, field) in object.sorted(by: { $0.key < $1.key }).enumerated() {
            if i > 0 { out.append(UInt8(ascii: ",")) }
            writeQuoted(field.key, to: &out)
            out.append(UInt8(ascii: ":"))
            writeQuoted(field.value, to: &out)
        }
        out.append(UInt8(ascii: "}"))
        return String(decoding: out, as: UTF8.self)
    }

    /// Bytewise is exact: every character escaped is ASCII, and no byte of a multi-byte UTF-8
    /// sequence is below 0x80.
    private static func writeQuoted(_ text: String, to out: inout [UInt8]) {
        let quote = UInt8(ascii: "\""), backslash = UInt8(ascii: "\\")
        out.append(quote)
        // Most strings need no escape: one pass over the bytes, then a plain copy (over the
        // string's own buffer: walking its UTF-8 view a byte at a time was a twentieth of a feed).
        let plain = text.utf8.withContiguousStorageIfAvailable { bytes -> Bool in
            guard !bytes.contains(where: { $0 == quote || $0 == backslash || $0 < 0x20 }) else { return false }
            out.append(contentsOf: bytes)
            return true
        }
        if plain != true {
            let hex = Array("0123456789abcdef".utf8)
            for byte in text.utf8 {
                switch byte {
                case quote, backslash: out.append(backslash); out.append(byte)
                case UInt8(ascii: "\n"): out.append(backslash); out.append(UInt8(ascii: "n"))
                case UInt8(ascii: "\r"): out.append(backslash); out.append(UInt8(ascii: "r"))
                case UInt8(ascii: "\t"): out.append(backslash); out.append(UInt8(ascii: "t"))
                case ..<0x20: out.append(contentsOf: [backslash, UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0"), hex[Int(byte >> 4)], hex[Int(byte & 15)]])
                default: out.append(byte)
                }
            }
        }
        out.append(quote)
    }

    // And read back by hand: JSONDecoder was two fifths of the server's time serving an event feed.
    // Anything but a flat list or object of strings goes to the decoder.

    /// A list of strings as `json(_:)` writes it.
    public static func strings(_ text: String) -> [String] {
        if text == "[]" { return [] }
        return FlatJSON.list(text) ?? decodeList([String].self, text)
    }

    /// An object of strings as `json(_:)` writes it.
    public static func fields(_ text: String) -> [String: String] {
        if text == "{}" { return [:] }
        return FlatJSON.object(text) ?? decode([String: String].self, text) ?? [:]
    }

    /// Appends `text` as a JSON string.
    public static func writeJSON(_ text: String, to out: inout [UInt8]) {
        writeQuoted(text, to: &out)
    }

    /// A job's tasks or photos: `[]` without the encoder for the common empty list.
    public static func list<T: Encodable>(_ items: [T]) -> String {
        items.isEmpty ? "[]" : encode(items)
    }

    /// A service request's events carry its number in a column of their own, for its history.
    public static func requestNumber(of event: Event) -> Int64? {
        event.type.hasPrefix("request.") ? event.data["request"].flatMap { Int64($0) } : nil
    }

    /// ` alice bob `: spaces on both ends, so a search for ` key ` finds a whole key, never a part of one.
    public static func audience(_ keys: [String]) -> String {
        " " + keys.map(Account.key).joined(separator: " ") + " "
    }

    public static func audience(_ column: String) -> [String] {
        column.split(separator: " ").map(String.init)
    }

    // Skills and places are kept one per line: no line break can come through IRC or the rules, and
    // a match reads a thousand contractors, where a JSON decoder per list was most of its time.
    public static func lines(_ list: [String]) -> String { list.joined(separator: "\n") }
    public static func lines(_ text: String) -> [String] { text.isEmpty ? [] : text.split(separator: "\n").map(String.init) }
}

/// A reader of JSON that is one flat list or object of strings; nil for anything else. It reads
/// the text where it is: a copy of each event's fields was an allocation a row of a feed.
public struct FlatJSON {
    private let bytes: UnsafeBufferPointer<UInt8>
    private var at = 0

    private init(_ bytes: UnsafeBufferPointer<UInt8>) { self.bytes = bytes }

    public static func list(_ text: String) -> [String]? { reading(text.utf8) { $0.list() } }
    public static func object(_ text: String) -> [String: String]? { reading(text.utf8) { $0.object() } }
    public static func object(_ bytes: some Collection<UInt8>) -> [String: String]? { reading(bytes) { $0.object() } }

    private static func reading<T>(_ bytes: some Collection<UInt8>, _ read: (inout FlatJSON) -> T?) -> T? {
        func over(_ buffer: UnsafeBufferPointer<UInt8>) -> T? {
            var reader = FlatJSON(buffer)
            return read(&reader)
        }
        return bytes.withContiguousStorageIfAvailable(over) ?? Array(bytes).withUnsafeBufferPointer(over)
    }

    private mutating func list() -> [String]? {
        guard take(UInt8(ascii: "[")) else { return nil }
        var items: [String] = []
        if take(UInt8(ascii: "]")) { return end() ? items : nil }
        repeat {
            guard let item = string() else { return nil }
            items.append(item)
        } while take(UInt8(ascii: ","))
        return take(UInt8(ascii: "]")) && end() ? items : nil
    }

    private mutating func object() -> [String: String]? {
        guard take(UInt8(ascii: "{")) else { return nil }
        // Room for an event's usual few fields: growing the table from empty was a twentieth of a feed.
        var fields: [String: String] = Dictionary(minimumCapacity: 8)
        if take(UInt8(ascii: "}")) { return end() ? fields : nil }
        repeat {
            guard let key = string(), take(UInt8(ascii: ":")), let value = string() else { return nil }
            fields[key] = value
        } while take(UInt8(ascii: ","))
        return take(UInt8(ascii: "}")) && end() ? fields : nil
    }

    private mutating func skipSpace() {
        while at < bytes.count, bytes[at] == 0x20 || bytes[at] == 0x0A || bytes[at] == 0x0D || bytes[at] == 0x09 { at += 1 }
    }

    private mutating func take(_ byte: UInt8) -> Bool {
        skipSpace()
        guard at < bytes.count, bytes[at] == byte else { return false }
        at += 1
        return true
    }

    private mutating func end() -> Bool {
        skipSpace()
        return at == bytes.count
    }

    /// A quoted string; escapes as JSON has them.
    private mutating func string() -> String? {
        guard take(UInt8(ascii: "\"")) else { return nil }
        let start = at
        // No escape: the bytes as they are.
        while at < bytes.count, bytes[at] != UInt8(ascii: "\""), bytes[at] != UInt8(ascii: "\\") { at += 1 }
        guard at < bytes.count else { return nil }
        if bytes[at] == UInt8(ascii: "\"") {
            defer { at += 1 }
            return String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<at]), as: UTF8.self)
        }
        var out = Array(bytes[start..<at])
        var pendingHigh: UInt32?
        while at < bytes.count {
            let byte = bytes[at]
            at += 1
            if byte == UInt8(ascii: "\"") { return pendingHigh == nil ? String(decoding: out, as: UTF8.self) : nil }
            guard byte == UInt8(ascii: "\\") else {
                guard pendingHigh == nil else { return nil }
                out.append(byte)
                continue
            }
            guard at < bytes.count else { return nil }
            let escape = bytes[at]
            at += 1
            if escape == UInt8(ascii: "u") {
                guard at + 4 <= bytes.count, let unit = UInt32(String(decoding: bytes[at..<at + 4], as: UTF8.self), radix: 16) else { return nil }
                at += 4
                var scalar: Unicode.Scalar?
                if let high = pendingHigh {
                    guard (0xDC00...0xDFFF).contains(unit) else { return nil }
                    scalar = Unicode.Scalar(0x10000 + ((high - 0xD800) << 10) + (unit - 0xDC00))
                    pendingHigh = nil
                } else if (0xD800...0xDBFF).contains(unit) {
                    pendingHigh = unit
                    continue
                } else {
                    scalar = Unicode.Scalar(unit)
                }
                guard let scalar else { return nil }
                out.append(contentsOf: Array(String(Character(scalar)).utf8))
                continue
            }
            guard pendingHigh == nil else { return nil }
            switch escape {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): out.append(escape)
            case UInt8(ascii: "n"): out.append(0x0A)
            case UInt8(ascii: "r"): out.append(0x0D)
            case UInt8(ascii: "t"): out.append(0x09)
            case UInt8(ascii: "b"): out.append(0x08)
            case UInt8(ascii: "f"): out.append(0x0C)
            default: return nil
            }
        }
        return nil
    }
}
