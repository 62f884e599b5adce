import Foundation

/// What Chorus keeps of one account, and what becomes of it when the account goes.
///
/// **Deleting an account retires it** (`chorusd account del`): its sessions and tokens end, it can
/// no longer log in, its password hash, email and names are wiped, it leaves its rooms, and its
/// contractor profile, read markers and waiting notices are deleted. The account's row stays as a
/// tombstone, so that its name is never given to anyone else: what the team keeps under that name
/// (jobs, comments, room history, requests, offers, reviews, private conversations with the
/// others) can never become a newcomer's.
///
/// **Erasing it** (`chorusd account erase`) deletes its personal data as well: its private
/// conversations (both sides: they are the two people's alone), its time entries, modes, plan and
/// time settings. What it wrote in rooms and jobs is the team's record and stays, under the
/// retired name.
///
/// **Exporting it** (`chorusd account export`) gives every row that names the account, table by
/// table (`tables`), as JSON: never a password hash or a token's digest.
public struct AccountData: Sendable, Equatable {
    /// Table name → rows, each row column → value.
    public var tables: [String: [[String: Value]]]

    public init(tables: [String: [[String: Value]]]) {
        self.tables = tables
    }

    public enum Value: Sendable, Equatable {
        case null
        case integer(Int64)
        case real(Double)
        case text(String)
        case bool(Bool)
    }

    /// The export as JSON: `{"table": [{"column": value, …}, …], …}`, keys sorted.
    public func json() throws -> Data {
        var object: [String: Any] = [:]
        for (table, rows) in tables {
            object[table] = rows.map { row in
                row.mapValues { value -> Any in
                    switch value {
                    case .null: return NSNull()
                    case .integer(let n): return NSNumber(value: n)
                    case .real(let d): return NSNumber(value: d)
                    case .text(let s): return s
                    case .bool(let b): return NSNumber(value: b)
                    }
                }
            }
        }
        return try JSONSerialization.data(withJSONObject: object, options: [.prettyPrinted, .sortedKeys])
    }
}
