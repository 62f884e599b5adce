import ChorusCore
import Foundation

/// When each board's work comes due (`DueBoard`), written once for both databases. Several
/// processes on PostgreSQL take the boards that are due with `FOR UPDATE SKIP LOCKED`: no leader is
/// elected, two processes never do one board's work at once, and the board of a process that dies
/// before it commits is due again for the others (its locks go with its connection). SQLite's one
/// process takes them as they are.
public protocol SQLDueStore: Store, SQLDatabase {}

extension SQLDueStore {
    public func takeDueBoards(dueBy time: Date) throws -> [DueBoard] {
        try writing { c in
            try c.rows("SELECT board FROM due_work WHERE due_at <= \(Millis.from(time)) ORDER BY board\(raw: c.dialect.skipLocked)")
                .compactMap { DueBoard(rawValue: try $0.string("board")) }
                .sorted { DueBoard.allCases.firstIndex(of: $0)! < DueBoard.allCases.firstIndex(of: $1)! }
        }
    }

    public func holdDueBoards(_ boards: [DueBoard]) throws {
        guard !boards.isEmpty else { return }
        try writing { c in
            guard !c.dialect.forUpdate.isEmpty else { return }
            // In one order, whoever asks: two processes holding boards wait for each other in turn, never in a ring.
            let names = boards.map(\.rawValue).sorted()
            _ = try c.rows("SELECT board FROM due_work WHERE board IN (\(list: names)) ORDER BY board\(raw: c.dialect.forUpdate)")
        }
    }

    public func dueTimes() throws -> [DueBoard: Date?] {
        try reading { c in
            var times: [DueBoard: Date?] = [:]
            for row in try c.rows("SELECT board, due_at FROM due_work") {
                guard let board = DueBoard(rawValue: try row.string("board")) else { continue }
                times[board] = try row.date("due_at") as Date?
            }
            return times
        }
    }

    public func setNextDue(of board: DueBoard, to time: Date?) throws {
        try writing { c in
            try c.run("""
                INSERT INTO due_work (board, due_at) VALUES (\(board.rawValue), \(time.map(Millis.from)))
                ON CONFLICT (board) DO UPDATE SET due_at = excluded.due_at
                """)
        }
    }

    public func nextDue() throws -> Date? {
        try reading { c in try c.rows("SELECT min(due_at) AS due FROM due_work").first.flatMap { try $0.date("due") } }
    }
}
