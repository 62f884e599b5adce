import Foundation
import NIOCore
import PostgresNIO
import ChorusSQL

/// A value a statement takes for a `?`.
protocol PostgresBindable {
    func bind(to binds: inout PostgresBindings)
}

extension String: PostgresBindable { func bind(to binds: inout PostgresBindings) { binds.append(self) } }
extension Int: PostgresBindable { func bind(to binds: inout PostgresBindings) { binds.append(Int64(self)) } }
extension Int64: PostgresBindable { func bind(to binds: inout PostgresBindings) { binds.append(self) } }
extension Bool: PostgresBindable { func bind(to binds: inout PostgresBindings) { binds.append(self) } }
extension Data: PostgresBindable { func bind(to binds: inout PostgresBindings) { binds.append(ByteBuffer(bytes: self)) } }
extension Optional: PostgresBindable where Wrapped: PostgresBindable {
    func bind(to binds: inout PostgresBindings) {
        if let value = self { value.bind(to: &binds) } else { binds.appendNull() }
    }
}

extension SQLCondition {
    /// The values as PostgreSQL binds them.
    var postgresBinds: [any PostgresBindable] {
        values.map { value -> any PostgresBindable in
            switch value {
            case .text(let text): text
            case .integer(let number): number
            }
        }
    }
}

/// A row's columns by position, as the store's statements list them.
extension PostgresRandomAccessRow {
    func string(_ i: Int) throws -> String { try self[i].decode(String.self) }
    func string(_ i: Int) throws -> String? { try self[i].decode(String?.self) }
    func int64(_ i: Int) throws -> Int64 { try self[i].decode(Int64.self) }
    func int64(_ i: Int) throws -> Int64? { try self[i].decode(Int64?.self) }
    func int(_ i: Int) throws -> Int { Int(try self[i].decode(Int64.self)) }
    func int(_ i: Int) throws -> Int? { try self[i].decode(Int64?.self).map { Int($0) } }
    func bool(_ i: Int) throws -> Bool { try self[i].decode(Bool.self) }
    func date(_ i: Int) throws -> Date { Millis.date(try self[i].decode(Int64.self)) }
    func date(_ i: Int) throws -> Date? { try self[i].decode(Int64?.self).map(Millis.date) }
}
