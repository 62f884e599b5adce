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
        // Most strings need no escape: one pass over the bytes, then a plain copy.
        if !text.utf8.contains(where: { $0 == quote || $0 == backslash || $0 < 0x20 }) {
            out.append(contentsOf: text.utf8)
        } else {
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
