import ChorusSQL
import XCTest

/// A statement's values are kept beside its text, each where it was written, and each database's
/// spelling of the places is made from that, never by searching the text.
final class SQLTests: XCTestCase {
    func testEachValueIsBoundWhereItIsWrittenInEitherSpelling() {
        let room = "#kitchen", limit = 20
        let due: Int64? = nil
        let sql: SQL = "SELECT id FROM jobs WHERE room = \(room) AND title LIKE '?%' AND due IS \(due) LIMIT \(limit)"
        XCTAssertEqual(sql.questionMarked, "SELECT id FROM jobs WHERE room = ? AND title LIKE '?%' AND due IS ? LIMIT ?")
        XCTAssertEqual(sql.numbered, "SELECT id FROM jobs WHERE room = $1 AND title LIKE '?%' AND due IS $2 LIMIT $3")
        XCTAssertEqual(sql.values, [.text("#kitchen"), .null, .integer(20)])

        let accented: SQL = "SELECT 'é, ü' AS e, \(1) AS n, '✓' AS m, \(2) AS o"
        XCTAssertEqual(accented.numbered, "SELECT 'é, ü' AS e, $1 AS n, '✓' AS m, $2 AS o")

        let plain: SQL = "SELECT 1"
        XCTAssertEqual(plain.numbered, "SELECT 1")
        XCTAssertEqual(plain.values, [])
    }

    func testFragmentsListsAndRawTextKeepTheirValuesInOrder() {
        let columns = "id, title"
        let inRooms: SQL = "room IN (\(list: ["#a", "#b"]))"
        let sql: SQL = "SELECT \(raw: columns) FROM jobs WHERE \(inRooms) AND id > \(7) ORDER BY id"
        XCTAssertEqual(sql.numbered, "SELECT id, title FROM jobs WHERE room IN ($1, $2) AND id > $3 ORDER BY id")
        XCTAssertEqual(sql.values, [.text("#a"), .text("#b"), .integer(7)])

        let joined = [SQL("a = \(1)"), SQL("b = \(2)"), "c IS NULL"].joined(separator: " AND ") + " LIMIT \(3)"
        XCTAssertEqual(joined.numbered, "a = $1 AND b = $2 AND c IS NULL LIMIT $3")
        XCTAssertEqual(joined.values, [.integer(1), .integer(2), .integer(3)])

        let many: SQL = "(\(list: Array(1...12)))"
        XCTAssertEqual(many.numbered, "(" + (1...12).map { "$\($0)" }.joined(separator: ", ") + ")")
    }

    func testAssignmentsPairATablesColumnsWithTheirValues() {
        let set = SQL.assignments("room, \"window\",\n due", ["#a", Optional<String>.none, Int64(5)])
        XCTAssertEqual(set.numbered, "room = $1, \"window\" = $2, due = $3")
        XCTAssertEqual(set.values, [.text("#a"), .null, .integer(5)])
    }
}
