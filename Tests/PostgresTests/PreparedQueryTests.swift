import Postgres
import Testing
import TestSupport

/// `queryPrepared`: a query planned once per session, prepared again under a new name after anything that may have
/// dropped it, never failing because a script deallocated it (which inside a transaction would abort it).
@Suite("prepared queries", .needsCluster)
struct PreparedQueryTests {
    func prepared(_ c: Connection) throws -> Int {
        try c.query("select count(*) from pg_prepared_statements where name like 'steward\\_%'").scalar(Int.self)
    }

    @Test("prepared once, reused; after DEALLOCATE ALL or DISCARD ALL prepared again; inside a transaction a script's DEALLOCATE does not abort it")
    func preparedOnceAndAgain() throws {
        try withTestDatabase { db in
            let c = try db.connect()
            for _ in 0..<3 { #expect(try c.queryPrepared("t", "select 41 + 1").scalar(Int.self) == 42) }
            #expect(try prepared(c) == 1)
            try c.query("deallocate all")
            #expect(try c.queryPrepared("t", "select 41 + 1").scalar(Int.self) == 42)
            #expect(try prepared(c) == 1)
            try c.execute("discard all")
            #expect(try c.queryPrepared("t", "select 41 + 1").scalar(Int.self) == 42)
            try c.transaction { t in
                #expect(try t.queryPrepared("t", "select 41 + 1").scalar(Int.self) == 42)
                try t.execute("deallocate all")
                #expect(try t.queryPrepared("t", "select 41 + 1").scalar(Int.self) == 42)
                // Text that only mentions the word: prepared again under a new name, never a duplicate-name error.
                try t.query("select 'deallocate' as word")
                #expect(try t.queryPrepared("t", "select 41 + 1").scalar(Int.self) == 42)
            }
        }
    }

    @Test("deallocating a script's own statements keeps Steward's known and prepared; naming one of Steward's forgets it")
    func deallocateOthers() throws {
        try withTestDatabase { db in
            let c = try db.connect()
            #expect(try c.queryPrepared("t", "select 41 + 1").scalar(Int.self) == 42)
            let names = c.preparedStatementNames
            try c.execute("prepare \"Script's\" as select 1")
            try c.deallocate(["Script's"])
            #expect(c.preparedStatementNames == names)
            #expect(try c.query("select count(*)::int from pg_prepared_statements").scalar(Int.self) == 1)
            #expect(try c.queryPrepared("t", "select 41 + 1").scalar(Int.self) == 42)
            try c.deallocate(names)
            #expect(c.preparedStatementNames.isEmpty)
            #expect(try c.queryPrepared("t", "select 41 + 1").scalar(Int.self) == 42)
        }
    }

    @Test("DISCARD TEMP, SEQUENCES and PLANS keep it prepared: the same server-side statement is used again")
    func keptAcrossPartialDiscards() throws {
        try withTestDatabase { db in
            let c = try db.connect()
            #expect(try c.queryPrepared("t", "select 41 + 1").scalar(Int.self) == 42)
            let names = c.preparedStatementNames
            #expect(names.count == 1)
            try c.pipeline(["discard temp", "discard sequences", "discard plans", "close all", "reset all"])
            #expect(try c.queryPrepared("t", "select 41 + 1").scalar(Int.self) == 42)
            #expect(c.preparedStatementNames == names)
            #expect(try prepared(c) == 1)
        }
    }
}
