import ChorusCore
import ChorusPostgres
import ChorusTestSupport
import Foundation
import XCTest

/// How a batch's savepoints take back a refused command (`TakingBack`), on the store the suite
/// runs on (SQLite, or PostgreSQL with `CHORUS_TEST_STORE=postgres`).
final class TakingBackTests: XCTestCase {
    /// Without savepoints in the database (the Workspace's first try at a batch): a refused command
    /// that wrote nothing costs nothing and the batch commits; one that wrote makes the batch throw
    /// `needsSavepoints`, nothing of it is kept, and run again with savepoints it keeps exactly the
    /// kept commands. For the first command (the transaction itself on PostgreSQL) and later ones.
    func testABatchWithoutSavepointsRunsAgainWithThemOnlyWhenARefusedCommandWrote() throws {
        /// The accounts a batch of 40 kept, and how many times it ran. Every fifth command is refused
        /// and every eleventh fails before writing; `failedStatement` ones first insert an account
        /// that exists (u1) and fail; `refusedAfterWriting` ones are refused after their insert.
        /// Deleted accounts keep their names, so each run has names of its own (`a-u1`, `b-u1` …).
        var batches = 0
        func run(_ store: any ChorusStorage, failedStatement: Set<Int> = [],
                 refusedAfterWriting: Set<Int> = []) throws -> (kept: [String], runs: Int) {
            batches += 1
            let p = "b\(batches)-"
            let before = Set(try store.allAccounts().map(\.name))
            func added() throws -> [String] { try store.allAccounts().map(\.name).filter { !before.contains($0) }.sorted() }
            _ = try store.insertAccount(Account(name: p + "u1", passwordHash: "x", createdAt: Date()))
            var takingBack = TakingBack.byRunningAgain
            var runs = 0
            while true {
                runs += 1
                do {
                    try store.transaction(cache: StoreCache()) { tx in
                        for i in 2...41 {
                            try tx.savepoint(takingBack) {
                                if i % 5 == 0 { return false }
                                if i % 11 == 0 { throw StoreError.notFound("u\(i)") }
                                if failedStatement.contains(i) {
                                    _ = try tx.insertAccount(Account(name: p + "u1", passwordHash: "x", createdAt: Date()))
                                }
                                _ = try tx.insertAccount(Account(name: p + "u\(i)", passwordHash: "x", createdAt: Date()))
                                return !refusedAfterWriting.contains(i)
                            }
                        }
                    }
                    break
                } catch StoreError.needsSavepoints where takingBack == .byRunningAgain {
                    XCTAssertEqual(try added(), [p + "u1"], "nothing of a batch that must run again is kept")
                    takingBack = .bySavepoint
                }
            }
            return (try added().filter { $0 != p + "u1" }.map { String($0.dropFirst(p.count)) }.sorted(), runs)
        }
        func expected(leavingOut: Set<Int>) -> [String] {
            (2...41).filter { $0 % 5 != 0 && $0 % 11 != 0 && !leavingOut.contains($0) }.map { "u\($0)" }.sorted()
        }
        let store = try TestStore.fresh()
        defer { store.close() }
        let name = store is PostgresStore ? "PostgreSQL" : "SQLite"
        var outcome = try run(store)
        XCTAssertEqual(outcome.kept, expected(leavingOut: []), name)
        XCTAssertEqual(outcome.runs, 1, "\(name): commands refused before writing cost no second run")
        // A failed statement takes back only itself on SQLite, and aborts the transaction on
        // PostgreSQL, where the first command of a batch is taken back by starting it over.
        let onPostgres = store is PostgresStore
        let cases: [(failed: Set<Int>, refused: Set<Int>, runs: Int)] = [
            ([2], [], 1), ([24], [], onPostgres ? 2 : 1),
            ([], [2], onPostgres ? 1 : 2), ([], [3], 2), ([], [41], 2), ([], [8, 9], 2),
        ]
        for (failed, refused, runs) in cases {
            outcome = try run(store, failedStatement: failed, refusedAfterWriting: refused)
            XCTAssertEqual(outcome.kept, expected(leavingOut: failed.union(refused)), "\(name): failed \(failed), refused \(refused)")
            XCTAssertEqual(outcome.runs, runs, "\(name): failed \(failed), refused \(refused)")
        }
    }
}
