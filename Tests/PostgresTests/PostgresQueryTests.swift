import Foundation
import Postgres
import Testing
import TestSupport

/// Hostile text for values and names: quotes, comment and statement breaks, dollar quotes, placeholders, escapes.
struct HostileText {
    var random: SeededGenerator
    static let pieces = ["'", "''", "\"", "\"\"", ";", "--", "/*", "*/", "$$", "$1", "$2", "$tag$", "\\", "\\'", "E'", ",", "{", "}",
                         "(", ")", "NULL", "null", " ", "\n", "\r", "\t", "drop table steward_canary;", "é", "e\u{301}", "😀", "ß",
                         "\u{200B}", "\u{FEFF}", "Ω", "中文", "a", "Z", "0", "U&\"", "\\x00", "%", "_"]

    init(seed: UInt64) { random = SeededGenerator(seed: seed) }

    /// A string of up to `maxPieces` pieces (possibly empty), never NUL.
    mutating func next(maxPieces: Int = 12) -> String {
        let count = Int.random(in: 0...maxPieces, using: &random)
        return (0..<count).map { _ in Self.pieces.randomElement(using: &random)! }.joined()
    }

    /// A name of 1…63 bytes (the server's identifier limit), never NUL.
    mutating func name() -> String {
        var text = next(maxPieces: 8)
        if text.isEmpty { text = "x" }
        while text.utf8.count > 63 { text.removeLast() }
        return text.isEmpty ? "x" : text
    }
}

enum Colour: String, PostgresDecodable, PostgresBindable, Equatable {
    case red, green
}

@Suite("Typed SQL: interpolation binds, identifiers quote, decoding", .needsCluster)
struct PostgresQueryTests {
    @Test("interpolated values are parameters: generated hostile text comes back byte for byte and runs nothing")
    func valuesAreInert() throws {
        let seed = SeededGenerator.seedFromEnvironment
        print("PostgresQueryTests.valuesAreInert seed \(seed) (replay with STEWARD_TEST_SEED=\(seed))")
        var text = HostileText(seed: seed)
        try withTestDatabase { db in
            let c = try db.connect()
            try c.execute("create table steward_canary (v text)")
            var cases = 0
            for n in 0..<1500 {
                let value = text.next()
                let other = text.next()
                let query: PostgresQuery = "select \(value)::text as v, length(\(value)), \(n) + 1, \(other)::text"
                #expect(query.sql() == "select $1::text as v, length($2), $3 + 1, $4::text")
                let (back, length, next, second) = try c.query(query).first((String, Int, Int, String).self)
                #expect(back == value, "seed \(seed) case \(n)")
                #expect(length == value.count || value.unicodeScalars.count == length, "seed \(seed) case \(n)")
                #expect(next == n + 1 && second == other)
                try c.query("insert into steward_canary values (\(value))")
                cases += 1
            }
            let stored = try c.query("select v from steward_canary order by ctid").rows.map { try $0.decode(String.self, at: 0) }
            #expect(stored.count == cases)
            #expect(try c.query("select to_regclass('steward_canary') is not null").scalar(Bool.self))
            FaultLedger.check("typed SQL: hostile interpolated values", runs: cases, objectsChecked: stored.count, cases: cases)
        }
    }

    @Test("a NUL byte in a value or array element is refused before anything is sent, naming the parameter")
    func nulRefused() throws {
        try withTestDatabase { db in
            let c = try db.connect()
            let error = try #require(throws: PostgresError.self) { try c.query("select \("a\u{0}b")::text, \(1)") }
            #expect(error.kind == .invalidArgument)
            #expect(error.message.contains("$1"))
            let arrayError = try #require(throws: PostgresError.self) { try c.query("select \(["ok", "", "x\u{0}"])::text[]") }
            #expect(arrayError.kind == .invalidArgument)
            #expect(arrayError.message.contains("element 3"))
            #expect(c.isOpen && c.transactionStatus == .idle)
            #expect(try c.query("select 1").scalar(Int.self) == 1)
        }
    }

    @Test("identifiers are quoted: generated hostile names create, fill and read exactly that table and column")
    func identifiersAreInert() throws {
        let seed = SeededGenerator.seedFromEnvironment
        print("PostgresQueryTests.identifiersAreInert seed \(seed) (replay with STEWARD_TEST_SEED=\(seed))")
        var text = HostileText(seed: seed)
        try withTestDatabase { db in
            let c = try db.connect()
            try c.execute("create schema steward_names; create table steward_canary (v text)")
            var cases = 0
            for n in 0..<300 {
                let tableName = text.name(), columnName = text.name()
                let table = try SQLIdentifier("steward_names", tableName)
                let column = try SQLIdentifier(columnName)
                try c.query("create table \(table) (\(column) text)")
                try c.query("insert into \(table) (\(column)) values (\(tableName))")
                let (relname, attname) = try c.query("""
                    select c.relname::text, a.attname::text from pg_class c join pg_attribute a on a.attrelid = c.oid and a.attnum = 1
                    where c.oid = \(table.quoted)::regclass
                    """).first((String, String).self)
                #expect(relname == tableName && attname == columnName, "seed \(seed) case \(n)")
                #expect(try c.query("select \(column) from \(table)").scalar(String.self) == tableName, "seed \(seed) case \(n)")
                try c.query("drop table \(table)")
                cases += 1
            }
            #expect(try c.query("select count(*) from pg_class where relnamespace = 'steward_names'::regnamespace").scalar(Int.self) == 0)
            #expect(try c.query("select to_regclass('steward_canary') is not null").scalar(Bool.self))
            #expect(throws: PostgresError.self) { try SQLIdentifier("a\u{0}b") }
            #expect(throws: PostgresError.self) { try SQLIdentifier("") }
            #expect(throws: PostgresError.self) { try SQLIdentifier(parts: []) }
            #expect(try SQLIdentifier("a\"b", "c.d").quoted == #""a""b"."c.d""#)
            FaultLedger.check("typed SQL: hostile identifiers", runs: cases, objectsChecked: cases, cases: cases)
        }
    }

    @Test("unescaped text and fragments: fragments keep their own bindings, numbered after the ones before them")
    func fragments() throws {
        try withTestDatabase { db in
            let c = try db.connect()
            let filter: PostgresQuery = "g > \(2) and g <> \(4)"
            var query: PostgresQuery = "select count(*) from generate_series(1, $1) g where \(filter) and \(unescaped: "g % 2 = 1")"
            #expect(query.sql(parameterOffset: 1) == "select count(*) from generate_series(1, $1) g where g > $2 and g <> $3 and g % 2 = 1")
            #expect(try c.query(query, [9]).scalar(Int.self) == 4)   // 3, 5, 7, 9
            query = PostgresQuery.joined(["select \(1)::int", "select \(2)::int", "select \("7")::int * 0"], separator: " union all ")
            #expect(query.sql() == "select $1::int union all select $2::int union all select $3::int * 0")
            #expect(try c.query(query).rows.count == 3)
        }
    }

    @Test("arrays go in binary form: generated text, integer and uuid arrays come back element for element")
    func binaryArrays() throws {
        let seed = SeededGenerator.seedFromEnvironment
        print("PostgresQueryTests.binaryArrays seed \(seed) (replay with STEWARD_TEST_SEED=\(seed))")
        var text = HostileText(seed: seed)
        try withTestDatabase { db in
            let c = try db.connect()
            var cases = 0
            for n in 0..<400 {
                var elements = (0..<Int.random(in: 0...20, using: &text.random)).map { _ in text.next() }
                if n % 50 == 0 { elements.append(String(repeating: "{\\\",}", count: 50_000)) }
                if n % 7 == 0 { elements.append("") }
                let back = try c.query("select e from unnest(\(elements)) with ordinality u(e, i) order by i").rows.map { try $0.decode(String.self, at: 0) }
                #expect(back == elements, "seed \(seed) case \(n)")
                let (length, typeName, asText) = try c.query("select cardinality(\(elements)), pg_typeof(\(elements))::text, \(elements)::text")
                    .first((Int, String, [String]).self)
                #expect(length == elements.count && typeName == "text[]" && asText == elements, "seed \(seed) case \(n)")
                let numbers = (0..<Int.random(in: 0...30, using: &text.random)).map { _ in Int.random(in: Int.min...Int.max, using: &text.random) } + [Int.min, Int.max, 0]
                let sums = try c.query("select array_agg(e::text order by i) from unnest(\(numbers)) with ordinality u(e, i)").scalar([String].self)
                #expect(sums == numbers.map(String.init), "seed \(seed) case \(n)")
                let ids = (0..<Int.random(in: 0...10, using: &text.random)).map { _ in
                    UUID(uuid: withUnsafeBytes(of: (text.random.next(), text.random.next())) { Array($0) }.withUnsafeBytes { $0.load(as: uuid_t.self) })
                }
                let idsBack = try c.query("select e from unnest(\(ids)) with ordinality u(e, i) order by i").rows.map { try $0.decode(UUID.self, at: 0) }
                #expect(idsBack == ids, "seed \(seed) case \(n)")
                cases += 3
            }
            #expect(try c.query("select cardinality(\([String]())), cardinality(\([Int]())), cardinality(\([UUID]()))").first((Int, Int, Int).self) == (0, 0, 0))
            FaultLedger.check("typed SQL: binary arrays", runs: cases, objectsChecked: cases, cases: cases)
        }
    }

    @Test("dates decode in any session time zone; uuids, enums and tuples decode; errors name the column and the query")
    func decoding() throws {
        let seed = SeededGenerator.seedFromEnvironment
        print("PostgresQueryTests.decoding seed \(seed) (replay with STEWARD_TEST_SEED=\(seed))")
        var random = SeededGenerator(seed: seed)
        try withTestDatabase { db in
            let c = try db.connect()
            var cases = 0
            for zone in ["UTC", "Asia/Kathmandu", "America/St_Johns", "Europe/Amsterdam", "Pacific/Kiritimati", "America/Los_Angeles"] {
                try c.setSession("TimeZone", zone)
                for _ in 0..<200 {
                    // Microseconds from 1800 to 2200 (old dates carry local mean time offsets with seconds).
                    let micros = Int64.random(in: -5_364_662_400_000_000...7_258_118_400_000_000, using: &random)
                    let date = Date(timeIntervalSince1970: Double(micros) / 1_000_000)
                    let (back, epoch, shown) = try c.query("select \(date)::timestamptz, extract(epoch from \(date)::timestamptz)::text, \(date)::timestamptz::text")
                        .first((Date, String, String).self)
                    let exact = Double(epoch) ?? .nan
                    #expect(abs(back.timeIntervalSince1970 - exact) < 0.000_002, "\(zone) \(shown) seed \(seed)")
                    #expect(abs(back.timeIntervalSince1970 - date.timeIntervalSince1970) < 0.000_002, "\(zone) \(shown) seed \(seed)")
                    cases += 1
                }
            }
            try c.setSession("TimeZone", "UTC")
            #expect(throws: PostgresError.self) { try c.query("select 'infinity'::timestamptz").scalar(Date.self) }
            #expect(throws: PostgresError.self) { try c.query("select now()::timestamp").scalar(Date.self) }

            let id = UUID()
            #expect(try c.query("select \(id)::uuid").scalar(UUID.self) == id)
            #expect(try c.query("select \(Colour.green)::text").scalar(Colour.self) == .green)
            let unknown = try #require(throws: PostgresError.self) { try c.query("select 'blue' as colour").scalar(Colour.self) }
            #expect(unknown.kind == .decoding && unknown.message.contains("colour") && unknown.message.contains("select 'blue' as colour"))

            let width = try #require(throws: PostgresError.self) { try c.query("select 1, 2").first((Int, Int, Int).self) }
            #expect(width.message.contains("2 columns, 3 expected"))
            let none = try #require(throws: PostgresError.self) { try c.query("select 1 where false").scalar(Int.self) }
            #expect(none.kind == .decoding && none.message.contains("no row returned by \"select 1 where false\""))
            let missing = try #require(throws: PostgresError.self) { try c.query("select 1 as a").firstRow().decode(Int.self, "b") }
            #expect(missing.message.contains("no column \"b\"") && missing.message.contains("select 1 as a"))
            let bad = try #require(throws: PostgresError.self) { try c.query("select 1 as a, 'x' as b").first((Int, Int).self) }
            #expect(bad.message.contains("\"b\"") && bad.message.contains("column 2"))
            FaultLedger.check("typed SQL: decoding dates in six time zones", runs: cases, objectsChecked: cases, cases: cases)
        }
    }
}
