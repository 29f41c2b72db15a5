import Foundation
import Postgres
import Testing
import TestSupport

@Suite("rows read in place (forEachRow)", .needsCluster)
struct ResultCellsTests {
    @Test("cells read in place equal the decoded rows: strings, NULL apart from empty, uuids from the server's text")
    func sameAsRows() throws {
        try withTestDatabase { db in
            let c = try db.connect()
            var random = SeededGenerator.fromEnvironment()
            print("forEachRow generated rows: seed \(random.seed) (STEWARD_TEST_SEED replays it)")
            var texts: [String] = (0..<300).map { _ in
                let pieces = ["a", "é", "ｕ", "\u{200D}", "👩‍👩‍👧", " ", "\"", "\\", ",", "{", "}", "NULL", "\n", "", String(repeating: "x", count: 40)]
                return (0..<Int.random(in: 0...6, using: &random)).map { _ in pieces.randomElement(using: &random) ?? "" }.joined()
            }
            texts[1] = ""   // row 2: an empty string, not NULL
            let ids = texts.map { _ in UUID() }
            let result = try c.query("""
                select u.id, case when u.n % 5 = 0 then null else u.t end, u.n
                from unnest(\(ids), \(texts)) with ordinality u(id, t, n) order by u.n
                """)
            let rows = try result.decode((UUID, String?, Int).self)
            var seen = 0
            try result.forEachRow { cells in
                #expect(cells.width == 3)
                let id = try cells.uuid(0), text = try cells.string(1), null = try cells.isNull(1)
                #expect(id == rows[cells.index].0)
                #expect(text == rows[cells.index].1)
                #expect(null == (rows[cells.index].1 == nil))
                seen += 1
            }
            #expect(seen == texts.count)
            #expect(rows[1].1 == "" && rows[4].1 == nil)
        }
    }

    @Test("a cell that is not a uuid, a NULL uuid and a missing column: a decoding error naming row and column, or nil")
    func badCells() throws {
        try withTestDatabase { db in
            let c = try db.connect()
            let result = try c.query("select 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a1' as short, 'A0EEBC99-9C0B-4EF8-BB6D-6BB9BD380A11' as upper, null::uuid as none, 'a0eebc99+9c0b-4ef8-bb6d-6bb9bd380a11' as dash")
            try result.forEachRow { cells in
                let short = #expect(throws: PostgresError.self) { try cells.uuid(0) }
                #expect(short?.kind == .decoding)
                #expect(short?.message.contains("column 1, row 1") == true)
                let upper = try cells.uuid(1), none = try cells.uuid(2)
                #expect(upper == UUID(uuidString: "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11"))
                #expect(none == nil)
                #expect(throws: PostgresError.self) { try cells.uuid(3) }
                #expect(throws: PostgresError.self) { try cells.string(4) }
                #expect(throws: PostgresError.self) { try cells.isNull(-1) }
            }
        }
    }
}
