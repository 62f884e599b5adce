import ChorusCore
import ChorusStore
import Foundation
import PostgresNIO
import ChorusSQL

/// When each board's work comes due (`DueBoard`), shared by every process on the database. A
/// process takes the boards that are due with `FOR UPDATE SKIP LOCKED`: no leader is elected, two
/// processes never do one board's work at once, and the board of a process that dies before it
/// commits is due again for the others (its locks go with its connection).
extension PostgresStore {
    public func takeDueBoards(dueBy time: Date) throws -> [DueBoard] {
        guard let link = connection else { throw StoreError.notInTransaction }
        return try link.query("""
            SELECT board FROM due_work WHERE due_at <= ? ORDER BY board FOR UPDATE SKIP LOCKED
            """, [Millis.from(time)]).compactMap { DueBoard(rawValue: try $0.string(0)) }
            .sorted { DueBoard.allCases.firstIndex(of: $0)! < DueBoard.allCases.firstIndex(of: $1)! }
    }

    public func holdDueBoards(_ boards: [DueBoard]) throws {
        guard let link = connection else { throw StoreError.notInTransaction }
        guard !boards.isEmpty else { return }
        // In one order, whoever asks: two processes holding boards wait for each other in turn, never in a ring.
        let names = boards.map(\.rawValue).sorted()
        _ = try link.query("SELECT board FROM due_work WHERE board IN (\(names.map { _ in "?" }.joined(separator: ", "))) ORDER BY board FOR UPDATE",
                           names.map { $0 as any PostgresBindable })
    }

    public func dueTimes() throws -> [DueBoard: Date?] {
        try db.read { link in
            var times: [DueBoard: Date?] = [:]
            for row in try link.query("SELECT board, due_at FROM due_work") {
                guard let board = DueBoard(rawValue: try row.string(0)) else { continue }
                times[board] = try row.date(1) as Date?
            }
            return times
        }
    }

    public func setNextDue(of board: DueBoard, to time: Date?) throws {
        try db.write { link in
            try link.execute("""
                INSERT INTO due_work (board, due_at) VALUES (?, ?)
                ON CONFLICT (board) DO UPDATE SET due_at = excluded.due_at
                """, [board.rawValue, time.map(Millis.from)])
        }
    }

    public func nextDue() throws -> Date? {
        try db.read { link in
            try link.query("SELECT min(due_at) FROM due_work").first.flatMap { try $0.date(0) as Date? }
        }
    }
}
