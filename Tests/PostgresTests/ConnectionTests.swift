import Foundation
import StewardLog
import Postgres
import Testing
import TestSupport

@Suite("Postgres connection over libpq")
struct ConnectionTests {
    @Test("parameters travel separately from the SQL and come back typed, NULL kept apart from empty", .needsCluster)
    func parameterizedQuery() throws {
        try withTestDatabase { db in
            let c = try db.connect()
            let row = try c.query("select $1::text as a, $2::int as b, $3::bool as c, $4::text as d, ''::text as e, $5::text[] as f",
                                  ["it's; drop table x; --", 42, true, nil, ["a", "b c", "d\"e"]]).rows[0]
            #expect(try row.decode(String.self, "a") == "it's; drop table x; --")
            #expect(try row.decode(Int.self, "b") == 42)
            #expect(try row.decode(Bool.self, "c") == true)
            #expect(try row.decode(String?.self, "d") == nil)
            #expect(try row.decode(String?.self, "e") == "")
            #expect(try row.decode([String].self, "f") == ["a", "b c", "d\"e"])
            #expect(throws: PostgresError.self) { try row.decode(String.self, "d") }
        }
    }

    @Test("a server error carries SQLSTATE, message, hint, position and the statement", .needsCluster)
    func errorFields() throws {
        try withTestDatabase { db in
            let c = try db.connect()
            let sql = "select 1 from no_such_table"
            let error = try #require(throws: PostgresError.self) { try c.query(unsafeSQL: sql) }
            #expect(error.sqlState == "42P01")
            #expect(error.message.contains("no_such_table"))
            #expect(error.position == 15)
            #expect(error.statement == sql)
            #expect(error.kind == .server)
            let dup = try #require(throws: PostgresError.self) {
                try c.execute("create table t (id int primary key); insert into t values (1), (1)")
            }
            #expect(dup.sqlState == "23505")
            #expect(dup.detail?.contains("(id)=(1)") == true)
            #expect(dup.constraintName == "t_pkey")
        }
    }

    @Test("transactions commit on return and roll back on throw", .needsCluster)
    func transactions() throws {
        try withTestDatabase { db in
            let c = try db.connect()
            try c.execute("create table t (id int)")
            try c.transaction { try $0.query("insert into t values (1)") }
            struct Boom: Error {}
            #expect(throws: Boom.self) {
                try c.transaction { conn in try conn.query("insert into t values (2)"); throw Boom() }
            }
            #expect(try c.query("select count(*) from t").rows[0].decode(Int.self, at: 0) == 1)
        }
    }

    @Test("session settings stick, identifiers are quoted by libpq", .needsCluster)
    func settingsAndIdentifiers() throws {
        try withTestDatabase { db in
            let c = try db.connect()
            try c.setSession("lock_timeout", "1500ms")
            #expect(try c.query("show lock_timeout").rows[0].decode(String.self, at: 0) == "1500ms")
            #expect(try c.quoteIdentifier("we\"ird name") == "\"we\"\"ird name\"")
            #expect(try c.query("select current_setting('application_name')").rows[0].decode(String.self, at: 0) == "steward")
            try c.requireSessionState()
        }
    }

    @Test("an unreachable server is connectionFailed and the password never shows")
    func unreachable() throws {
        let target = try ConnectionString("postgresql://postgres:hunter2secret@127.0.0.1:1/postgres?connect_timeout=2")
        let error = try #require(throws: PostgresError.self) { try Connection(target) }
        #expect(error.kind == .connectionFailed)
        #expect(!error.description.contains("hunter2secret"))
        #expect(target.description == "postgresql://postgres:***@127.0.0.1:1/postgres")
    }

    @Test("port 6543 (the transaction pooler) is refused with advice")
    func transactionPooler() throws {
        let target = try ConnectionString("postgresql://postgres.abc:pw@aws-0-eu-central-1.pooler.supabase.com:6543/postgres")
        let error = try #require(throws: PostgresError.self) { try Connection(target) }
        #expect(error.kind == .transactionPooler)
        #expect(error.hint?.contains("session pooler") == true)
    }

    @Test("a bad connection string is rejected by libpq's parser, naming the problem")
    func badConnectionString() {
        #expect(throws: PostgresError.self) { try ConnectionString("postgresql://[::1") }
        #expect(throws: PostgresError.self) { try ConnectionString("host=x bogus_key=1") }
    }

    @Test("values libpq reads only when it connects are checked at once: ports, sslmode, target_session_attrs, connect_timeout",
          arguments: [
        ("postgresql://h:99999/db", "a port is a number from 1 to 65535"),
        ("postgresql://h:0/db", "a port is a number from 1 to 65535"),
        ("host=a,b port=5432,x dbname=db", "a port is a number from 1 to 65535"),
        ("postgresql://h/db?sslmode=requried", "sslmode \"requried\" is not one of"),
        ("postgresql://h/db?sslmode=REQUIRE", "sslmode \"REQUIRE\" is not one of"),
        ("postgresql://h/db?target_session_attrs=writable", "target_session_attrs \"writable\" is not one of"),
        ("postgresql://u:pw@h/db?connect_timeout=soon", "connect_timeout is a whole number of seconds"),
        ("postgresql://u:pw@h/db?sslmode=verify-full", nil),
        ("host=a,b port=5432,5433 dbname=db target_session_attrs=read-write connect_timeout=10", nil),
        ("host=a,b port=,5433 dbname=db", nil),
        ("postgresql://[::1]:6543/db?sslmode=disable", nil),
    ] as [(String, String?)])
    func connectTimeValues(_ text: String, _ problem: String?) {
        do {
            _ = try ConnectionString(text)
            #expect(problem == nil, "accepted \(text)")
        } catch {
            #expect(problem.map { "\(error)".contains($0) } == true, "\(text): \(error)")
            #expect(!"\(error)".contains("pw"), "the password showed: \(error)")
        }
    }

    @Test("a password from a file joins a URL without showing up in its description", .needsCluster)
    func passwordJoin() throws {
        try withTestDatabase { db in
            let target = try ConnectionString(db.url.replacing(":steward-local@", with: "@")).with(password: "steward-local")
            #expect(!target.description.contains("steward-local"))
            let c = try Connection(target)
            #expect(try c.query("select current_user").rows[0].decode(String.self, at: 0) == "postgres")
        }
    }
}

@Suite("TLS to the database", .needsCluster)
struct TLSTests {
    /// A URL to the test cluster by host name `localhost`, as a certificate-checking client needs.
    func url(_ db: TestDatabase, _ query: String) -> String {
        let port = TestEnvironment.hostAndPort.split(separator: ":").last!
        return "postgresql://postgres:steward-local@localhost:\(port)/\(db.name)?hostaddr=127.0.0.1&\(query)"
    }

    @Test("sslmode=verify-full with the CA file connects encrypted; require does too")
    func verifyFull() throws {
        let ca = try #require(TestEnvironment.caCertificate, "scripts/test.sh sets STEWARD_TEST_CA")
        try withTestDatabase { db in
            for query in ["sslmode=verify-full&sslrootcert=\(ca)", "sslmode=require"] {
                let c = try Connection(ConnectionString(url(db, query)))
                #expect(try c.query("select ssl from pg_stat_ssl where pid = pg_backend_pid()").rows[0].decode(Bool.self, at: 0))
            }
        }
    }

    @Test("verify-full refuses a server whose certificate the given CA did not sign")
    func wrongAuthority() throws {
        try withTestDatabase { db in
            let error = #expect(throws: PostgresError.self) {
                try Connection(ConnectionString(url(db, "sslmode=verify-full&sslrootcert=/etc/ssl/certs/ca-certificates.crt")))
            }
            #expect(error?.kind == .connectionFailed)
            #expect(error?.message.contains("certificate") == true)
        }
    }
}

@Suite("server notices", .needsCluster)
struct NoticeTests {
    @Test("NOTICE and WARNING from the server reach the log with their level and SQLSTATE")
    func noticesAreLogged() throws {
        var fds: [Int32] = [0, 0]
        #expect(pipe(&fds) == 0)
        defer { close(fds[0]); close(fds[1]) }
        let logger = Logger(label: "test", sink: LogSink(minimumLevel: .debug, format: .json, fd: fds[1], journald: false))
        try withTestDatabase { db in
            let c = try Connection(ConnectionString(db.url), logger: logger)
            try c.execute("do $$ begin raise notice 'hello from plpgsql'; raise warning 'careful' using errcode = '01000'; end $$")
        }
        var buffer = [UInt8](repeating: 0, count: 4096)
        let n = read(fds[0], &buffer, buffer.count)
        let text = String(decoding: buffer[..<max(0, n)], as: UTF8.self)
        #expect(text.contains(#""level":"info""#) && text.contains("server notice: hello from plpgsql"))
        #expect(text.contains(#""level":"warning""#) && text.contains("server notice: careful"))
        #expect(text.contains(#""sqlstate":"01000""#))
    }
}
