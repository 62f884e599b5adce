import ChorusCore
import Foundation
import GRDB
import ChorusSQL

/// When each board's work comes due (`DueBoard`). One process has the file: a board is taken by
/// the transaction that asks, and nobody else could be holding it.
extension SQLiteStore {
    public func takeDueBoards(dueBy time: Date) throws -> [DueBoard] {
        let times = try dueTimes()
        return DueBoard.allCases.filter { board in
            guard let due = times[board] ?? nil else { return false }
            return due <= time
        }
    }

    public func holdDueBoards(_ boards: [DueBoard]) throws {}

    public func dueTimes() throws -> [DueBoard: Date?] {
        try db.read { db in
            var times: [DueBoard: Date?] = [:]
            for row in try Row.fetchAll(db, sql: "SELECT board, due_at FROM due_work") {
                guard let board = DueBoard(rawValue: row[0]) else { continue }
                times[board] = (row[1] as Int64?).map(Millis.date)
            }
            return times
        }
    }

    public func setNextDue(of board: DueBoard, to time: Date?) throws {
        try db.write { db in
            try db.run(sql: """
                INSERT INTO due_work (board, due_at) VALUES (?, ?)
                ON CONFLICT(board) DO UPDATE SET due_at = excluded.due_at
                """, arguments: [board.rawValue, time.map(Millis.from)])
        }
    }

    public func nextDue() throws -> Date? {
        try db.read { db in
            try Int64.fetchOne(db, sql: "SELECT min(due_at) FROM due_work").map(Millis.date)
        }
    }
}
