import Foundation

/// A statement with each value written where it goes: `"SELECT role FROM memberships WHERE room = \(key)"`
/// binds `key` at that place. The text is kept in SQLite's spelling (`?` for each value) with
/// where each value's place is, so PostgreSQL's (`$1`, `$2` …) is made without searching the
/// text, and a value cannot be bound to the wrong place.
///
/// SQL that is not a literal of the statement (a column list, a word the dialects spell
/// differently) goes in with `\(raw:)`; another `SQL` goes in whole, its values with it.
public struct SQL: Sendable, ExpressibleByStringInterpolation, CustomStringConvertible {
    /// The text with a `?` for each value: SQLite's spelling, and what the statement cache is keyed by.
    public fileprivate(set) var questionMarked: String
    /// Where each value's `?` stands in the text (its UTF-8 offset), in order.
    private var places: [Int]
    public private(set) var values: [SQLValue]

    public init(stringLiteral text: String) {
        questionMarked = text
        places = []
        values = []
    }

    public init(stringInterpolation s: Interpolation) {
        self = s.sql
    }

    /// SQL from text that holds no values (a migration's statement, a name made by the program).
    public init(raw text: String) {
        self.init(stringLiteral: text)
    }

    public struct Interpolation: StringInterpolationProtocol {
        var sql = SQL(stringLiteral: "")

        public init(literalCapacity: Int, interpolationCount: Int) {
            sql.questionMarked.reserveCapacity(literalCapacity + 2 * interpolationCount)
            sql.values.reserveCapacity(interpolationCount)
            sql.places.reserveCapacity(interpolationCount)
        }

        public mutating func appendLiteral(_ text: String) {
            sql.questionMarked += text
        }

        /// A value, bound here.
        public mutating func appendInterpolation(_ value: some SQLBindable) {
            sql.bind(value.sqlValue)
        }

        /// A value or NULL, bound here (its own overload: an optional is meant, not described).
        public mutating func appendInterpolation<V: SQLBindable>(_ value: V?) {
            sql.bind(value.sqlValue)
        }

        /// Values as a list, each bound: `(\(list: row))` is a row of `VALUES`.
        public mutating func appendInterpolation(list: [any SQLBindable]) {
            for (i, value) in list.enumerated() {
                if i > 0 { sql.questionMarked += ", " }
                sql.bind(value.sqlValue)
            }
        }

        /// Text that is SQL as it stands.
        public mutating func appendInterpolation(raw text: String) {
            sql.questionMarked += text
        }

        /// Another statement's text and values.
        public mutating func appendInterpolation(_ other: SQL) {
            sql += other
        }
    }

    fileprivate mutating func bind(_ value: SQLValue) {
        places.append(questionMarked.utf8.count)
        questionMarked += "?"
        values.append(value)
    }

    /// The text with `$1`, `$2` … for the values: PostgreSQL's spelling.
    public var numbered: String {
        guard !places.isEmpty else { return questionMarked }
        var text: [UInt8] = []
        text.reserveCapacity(questionMarked.utf8.count + 4 * places.count)
        var from = questionMarked.utf8.startIndex
        for (n, place) in places.enumerated() {
            let at = questionMarked.utf8.index(questionMarked.utf8.startIndex, offsetBy: place)
            text += questionMarked.utf8[from..<at]
            text += "$\(n + 1)".utf8
            from = questionMarked.utf8.index(after: at)
        }
        text += questionMarked.utf8[from...]
        return String(decoding: text, as: UTF8.self)
    }

    public var description: String { questionMarked }

    public static func += (a: inout SQL, b: SQL) {
        let offset = a.questionMarked.utf8.count
        a.questionMarked += b.questionMarked
        a.places += b.places.map { $0 + offset }
        a.values += b.values
    }

    public static func + (a: SQL, b: SQL) -> SQL {
        var sum = a
        sum += b
        return sum
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
        let names = columns.split(separator: ",")
        precondition(names.count == values.count, "\(names.count) columns, \(values.count) values")
        var set: SQL = ""
        for (i, (name, value)) in zip(names, values).enumerated() {
            if i > 0 { set.questionMarked += ", " }
            set.questionMarked += name.drop(while: \.isWhitespace)
            set.questionMarked += " = "
            set.bind(value.sqlValue)
        }
        return set
    }
}
