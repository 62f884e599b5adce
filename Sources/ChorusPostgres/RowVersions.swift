import ChorusCore
import ChorusSQL
import PostgresNIO

/// Two processes may read one row in transactions that overlap and each write what it decided
/// from it: two `!done`s on one job, a task added on each of two nodes. The second write must not
/// replace the first unseen. Each row a transaction reads to change is remembered with its version,
/// PostgreSQL's `xmin` (the transaction that last wrote it), and the write changes it only if that
/// is still so; otherwise the transaction's command runs again on what is there now
/// (`PostgresStore.savepoint`). No lock is taken by reading: locks taken mid-batch deadlocked
/// against the log's lock, and holding the log's lock for a whole batch cost every node's latency.
extension PostgresLink {
    private static func key(_ table: String, _ id: Int64) -> String { "\(table) \(id)" }

    /// The rows `sql` returns, whose first column is the row's id and whose last is `xmin::text`
    /// of `table`: in a transaction, each row's version is kept for `updateRow`.
    func queryVersioned(_ table: String, _ sql: SQL) throws -> [PostgresRandomAccessRow] {
        let rows = try query(sql)
        if inOpenTransaction {
            for row in rows {
                versionsRead[Self.key(table, try row.int64(0))] = try row.string(row.count - 1)
            }
        }
        return rows
    }

    /// `UPDATE table SET assignments WHERE id = id`, and only if nobody changed the row since this
    /// transaction read it: throws `StoreError.conflict` (and marks the transaction `conflicted`)
    /// when somebody did, `StoreError.notFound` when there is no such row.
    func updateRow(_ table: String, id: Int64, set assignments: SQL, what: String) throws {
        let check = takeVersionCheck(table, id)
        let changed = try execute("UPDATE \(raw: table) SET \(assignments) WHERE id = \(id)\(check.condition)")
        if changed == 0 { throw rowNotWritten(what, checked: check.checked) }
    }

    /// What makes a write of row `id` hold only while the row is as this transaction read it
    /// (` AND xmin = …::xid` with its value), or nothing when it was not read here. Once written
    /// here the row is this transaction's (its lock is held until the end): a later write in it
    /// needs no check, and the next read keeps the new version.
    func takeVersionCheck(_ table: String, _ id: Int64) -> (condition: SQL, checked: Bool) {
        guard let version = versionsRead.removeValue(forKey: Self.key(table, id)) else { return ("", false) }
        return (" AND xmin = \(version)::xid", true)
    }

    /// The error for a write of one row that changed nothing: another process changed the row
    /// since it was read (`checked`: the transaction is marked `conflicted`), or it is not there.
    func rowNotWritten(_ what: String, checked: Bool) -> StoreError {
        guard checked else { return .notFound(what) }
        conflicted = true
        return .conflict(what)
    }

    /// After a savepoint is taken back: versions read in it may be of its own writes.
    func forgetVersions() {
        versionsRead.removeAll(keepingCapacity: true)
    }

    /// Whether a write found a row changed since it was read, since the last time this was asked.
    func takeConflict() -> Bool {
        defer { conflicted = false }
        return conflicted
    }
}
