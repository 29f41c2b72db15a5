import Postgres
import Testing
import TestSupport

@Suite("Connection.pipeline: several statements, one round trip, each its own transaction", .needsCluster)
struct PipelineTests {
    @Test("answers come back in order, typed, each statement in its own transaction, one round trip in all")
    func inOrder() throws {
        try withTestDatabase { db in
            let c = try db.connect()
            let before = (c.roundTrips, c.statementsSent)
            let answers = try c.pipeline([
                "select \(41) + 1", "select txid_current()", "select txid_current()",
                "select set_config('steward.pipeline_probe', \("kept"), false)", "select current_setting('steward.pipeline_probe')",
            ])
            #expect(c.roundTrips == before.0 + 1)
            #expect(c.statementsSent == before.1 + 5)
            #expect(try answers[0].scalar(Int.self) == 42)
            #expect(try answers[1].scalar(Int.self) != answers[2].scalar(Int.self))
            #expect(try answers[4].scalar(String.self) == "kept")
            #expect(c.transactionStatus == .idle)
        }
    }

    @Test("a failing statement is thrown after the others ran; the connection is usable after it")
    func failureInTheMiddle() throws {
        try withTestDatabase { db in
            let c = try db.connect()
            try c.execute("create table pipeline_marks (n int)")
            var thrown: PostgresError?
            do {
                try c.pipeline(["insert into pipeline_marks values (1)", "select 1 / 0", "insert into pipeline_marks values (3)",
                                "select * from no_such_table"])
            } catch let error as PostgresError {
                thrown = error
            }
            #expect(thrown?.sqlState == "22012")
            #expect(thrown?.statement == "select 1 / 0")
            #expect(try c.query("select array_agg(n order by n)::text from pipeline_marks").scalar(String.self) == "{1,3}")
            #expect(c.transactionStatus == .idle)
            #expect(try c.pipeline(["select 1", "select 2"]).map { try $0.scalar(Int.self) } == [1, 2])
        }
    }

    @Test("inside an explicit transaction the statements share it; a bad parameter stops the pipeline before it is sent")
    func insideTransactionAndBadParameter() throws {
        try withTestDatabase { db in
            let c = try db.connect()
            let ids = try c.transaction { c in try c.pipeline(["select txid_current()", "select txid_current()"]).map { try $0.scalar(Int.self) } }
            #expect(ids[0] == ids[1])
            let sent = c.statementsSent
            #expect(throws: PostgresError.self) { try c.pipeline(["select 1", "select \("nul\u{0}byte")::text"]) }
            #expect(c.statementsSent == sent)
            #expect(try c.query("select 7").scalar(Int.self) == 7)
        }
    }

    @Test("the session probe with statements beside it: two round trips, the answers of both halves returned")
    func probeAlongside() throws {
        try withTestDatabase { db in
            let c = try db.connect()
            let before = c.roundTrips
            let (first, then) = try c.requireSessionState(alongside: ["select 10", "select 20"]) { answers in
                let sum = try answers[0].scalar(Int.self) + answers[1].scalar(Int.self)
                return ["select \(sum) * 2"]
            }
            #expect(c.roundTrips == before + 2)
            #expect(try first.map { try $0.scalar(Int.self) } == [10, 20])
            #expect(try then.map { try $0.scalar(Int.self) } == [60])
        }
    }
}
