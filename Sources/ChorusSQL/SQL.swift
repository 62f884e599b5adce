import Foundation

/// A statement with each value written where it goes: `"SELECT role FROM memberships WHERE room = \(key)"`
/// binds `key` at that place. The driver spells the places its own way as it runs the statement
/// (`?` for SQLite, `$1`, `$2` … for PostgreSQL) from the pieces kept between them, so no
/// statement's text is ever searched for placeholders, and a value cannot be bound to the wrong one.
///
/// SQL that is not a literal of the statement (a column list, a word the dialects spell
/// differently) goes in with `\(raw:)`; another `SQL` goes in whole, its values with it.
public struct SQL: Sendable, ExpressibleByStringInterpolation, CustomStringConvertible {
    /// The text around the values: one piece more than there are values.
    public private(set) var pieces: [String]
    public private(set) var values: [SQLValue]

    public init(stringLiteral text: String) {
        pieces = [text]
        values = []
    }

    public init(stringInterpolation s: Interpolation) {
        pieces = s.pieces
        values = s.values
    }

    /// SQL from text that holds no values (a migration's statement, a name made by the program).
    public init(raw text: String) {
        self.init(stringLiteral: text)
    }

    public struct Interpolation: StringInterpolationProtocol {
        var pieces = [""]
        var values: [SQLValue] = []

        public init(literalCapacity: Int, interpolationCount: Int) {
            values.reserveCapacity(interpolationCount)
        }

        public mutating func appendLiteral(_ text: String) {
            pieces[pieces.count - 1] += text
        }

        /// A value, bound here.
        public mutating func appendInterpolation(_ value: some SQLBindable) {
            values.append(value.sqlValue)
            pieces.append("")
        }

        /// A value or NULL, bound here (its own overload: an optional is meant, not described).
        public mutating func appendInterpolation<V: SQLBindable>(_ value: V?) {
            appendInterpolation(value.sqlValue)
        }

        /// Values as a list, each bound: `(\(list: row))` is a row of `VALUES`.
        public mutating func appendInterpolation(list: [any SQLBindable]) {
            for (i, value) in list.enumerated() {
                if i > 0 { appendLiteral(", ") }
                appendInterpolation(value.sqlValue)
            }
        }

        /// Text that is SQL as it stands.
        public mutating func appendInterpolation(raw text: String) {
            appendLiteral(text)
        }

        /// Another statement's text and values.
        public mutating func appendInterpolation(_ sql: SQL) {
            appendLiteral(sql.pieces[0])
            pieces += sql.pieces.dropFirst()
            values += sql.values
        }
    }

    /// The text with a `?` for each value: SQLite's spelling.
    public var questionMarked: String {
        pieces.count == 1 ? pieces[0] : pieces.joined(separator: "?")
    }

    /// The text with `$1`, `$2` … for the values: PostgreSQL's spelling.
    public var numbered: String {
        guard pieces.count > 1 else { return pieces[0] }
        var text = pieces[0]
        text.reserveCapacity(pieces.reduce(0) { $0 + $1.utf8.count } + 4 * values.count)
        for i in 1..<pieces.count {
            text += "$\(i)"
            text += pieces[i]
        }
        return text
    }

    public var description: String { questionMarked }

    public static func + (a: SQL, b: SQL) -> SQL {
        var sum = a
        sum.pieces[sum.pieces.count - 1] += b.pieces[0]
        sum.pieces += b.pieces.dropFirst()
        sum.values += b.values
        return sum
    }

    public static func += (a: inout SQL, b: SQL) {
        a = a + b
    }
}

extension SQLValue: SQLBindable {
    public var sqlValue: SQLValue { self }
}

extension Sequence<SQL> {
    /// The statements' texts one after another with `separator` between, and their values in order.
    public func joined(separator: String) -> SQL {
        var all: SQL = ""
        for (i, part) in enumerated() {
            if i > 0 { all += SQL(raw: separator) }
            all += part
        }
        return all
    }
}

extension SQL {
    /// `column = value, …` for an `UPDATE`'s `SET`: `columns` as an `INSERT` lists them
    /// (`"room, title, …"`), `values` in that order, so one list of a table's columns serves both.
    public static func assignments(_ columns: String, _ values: [any SQLBindable]) -> SQL {
        let names = columns.split(separator: ",").map { $0.trimmingCharacters(in: .whitespacesAndNewlines) }
        precondition(names.count == values.count, "\(names.count) columns, \(values.count) values")
        return zip(names, values).map { name, value in "\(raw: name) = \(value.sqlValue)" as SQL }.joined(separator: ", ")
    }
}
