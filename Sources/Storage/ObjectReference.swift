import StewardJSON
/// The exact reading of a stored reference (a `profiles.avatar_url` value): which objects it names for certain. One
/// definition, in SQL, used by the orphan scan's fast path, both re-checks and the opt-in integrity trigger. What
/// decides a deletion is the mention rule (`ObjectMention`), which keeps a superset: this reading can only add keeps.
///
/// `names(value, bucket)` returns rows `(name, loose)`. A row with `loose = false` is an exact object name the value
/// may name (every reading of an ambiguous value is listed: with and without its query, fragment, surrounding
/// whitespace, percent-escapes and dot segments, with and without a leading bucket). A row with `loose = true` means
/// the value is not understood for certain: the job counts it (`unrecognised_references`) and the trigger lets such
/// a value be saved. `matches(name, loose, object)` says whether a row may name an object (a loose row: one whose
/// name or last segment ends the row's text); the trigger's copy and the tests of this reading use it.
public enum ObjectReference {
    /// Objects with longer names (in characters) are never deleted: the scan's indexes hold names up to this length.
    public static let longestDeletableName = 512

    /// A value that is a plain name and nothing else (the seed's `<uuid>.jpeg`): it names itself, exactly.
    public static let plainName = "^[A-Za-z0-9_-][A-Za-z0-9_.-]*$"

    /// The common URL (getPublicUrl, a signed URL, a transform, a cache-buster) with a plain bucket and name, in two
    /// halves (the function's text continues the literal on a second line): captures the route's access, the first
    /// segment, the second and the query.
    public static let commonURLHead = #"^[A-Za-z][A-Za-z0-9+.-]*://[^/?#[:space:]]*/storage/v1/(?:object|render/image)/(public|authenticated|sign)/"#
    public static let commonURLTail = #"([A-Za-z0-9_-][A-Za-z0-9_.-]*)/([A-Za-z0-9_-][A-Za-z0-9_.-]*)(\?[A-Za-z0-9=&_.-]+)?$"#

    /// The body (between `$body$` markers) of the function `names(value text, bucket text)
    /// returns table (name text, loose boolean)`, in PL/pgSQL; it reads no table and calls only `pg_catalog`. Kept in
    /// `reference-names.sql` (embedded at build time); its `{{plainName}}`, `{{commonURLHead}}` and `{{commonURLTail}}`
    /// are these patterns, so the function and `commonNamesSQL` read with the same ones.
    public static let namesFunctionBody = "\n" + EmbeddedSQL.referenceNames
        .replacing("{{plainName}}", with: plainName)
        .replacing("{{commonURLHead}}", with: commonURLHead)
        .replacing("{{commonURLTail}}", with: commonURLTail)

    /// The body of `matches(name text, loose boolean, object_name text) returns boolean` (SQL): whether one row of
    /// `names` protects `object_name`. Names compare byte for byte (`=` on text is deterministic). Kept in
    /// `reference-matches.sql`.
    public static let matchesFunctionBody = "\n" + EmbeddedSQL.referenceMatches

    /// A select over the relation `source` (columns `col`, `ref` and `v`, the value as text) and the buckets
    /// `buckets` (an SQL `text[]` expression), giving rows `(col, ref, bucket, v, name, query, common)`: for a plain
    /// name or the common URL, one row a bucket it names (`v` null, `common` true) with its primary name (no `?`) and,
    /// when the URL has a query, that query without its `?`: the value then also names `name || '?' || query`; for any
    /// other value one marker row, `name` null and `v` kept, whose names `markerNamesSQL` asks the function for.
    /// Primary names longer than `longestName` characters are left out (no object has one). One row a value and
    /// bucket, no array built but the one-element one, no subplan: `create table … as` reads it in parallel.
    public static func readingSQL(source: String, buckets: String, longestName: Int) -> String {
        """
        select x.col, x.ref, x.bucket, case when x.e is null then x.v end as v, split_part(x.e, '?', 1) collate "C" as name,
               nullif(split_part(x.e, '?', 2), '') as query, x.e is not null as common
        from (select s.col, s.ref, b.bucket, s.v, unnest(coalesce(\(commonNamesSQL(value: "s.v", bucket: "b.bucket", bucketIsPlain: "b.plain")), '{NULL}'::text[])) as e
              from (\(source)) s
              cross join unnest(\(buckets), array(select x ~ '\(plainName)' from unnest(\(buckets)) with ordinality u(x, i) order by i)) as b(bucket, plain)) x
        where x.e is null or octet_length(split_part(x.e, '?', 1)) <= \(longestName) or length(split_part(x.e, '?', 1)) <= \(longestName)
        """
    }

    /// A select over `table`, which holds `readingSQL`'s rows, giving `(col, ref, bucket, v, name, loose)` for each
    /// marker row: what `function` (`pg_temp.steward_reference_names`) says the value names in that bucket.
    public static func markerNamesSQL(table: String, function: String) -> String {
        """
        select m.col, m.ref, m.bucket, m.v, x.name, x.loose from \(table) m cross join lateral \(function)(m.v, m.bucket) x where m.name is null
        """
    }

    /// An expression over SQL expressions `value`, `bucket` and `bucketIsPlain` (whether the bucket's name is itself a
    /// `plainName`, computed once a bucket): an array of the one name a plain name or the common URL gives in the
    /// bucket, with the URL's query if it has one (`name?query`: both parts hold no other `?`), or empty when the URL
    /// names another bucket, exactly as the function's first two steps read them (`plainName`, `commonURLHead` +
    /// `commonURLTail`); null for every other value. It takes the URL apart at its `/` with `split_part` (the scheme
    /// and host hold none, nor do the two segments or the query; negative positions count from the end) and tests each
    /// piece with an anchored character class, cheapest tests first: a fraction of the cost of that pattern's
    /// captures, so the reading runs in parallel workers. Counts are of bytes where that is exact (`/` and `?` are one
    /// byte): counting characters walks the UTF-8 text again. The usual scheme and a segment equal to a plain bucket
    /// pass without their pattern.
    public static func commonNamesSQL(value v: String, bucket b: String, bucketIsPlain plainBucket: String) -> String {
        func piece(_ n: Int) -> String { "split_part(\(v), '/', \(n))" }
        let last = piece(-1), first = piece(-2), access = piece(-3)
        let slashes = "(octet_length(\(v)) - octet_length(replace(\(v), '/', '')))"
        return """
            case when strpos(\(v), '/') = 0 and \(v) ~ '\(plainName)' then array[\(v)]
                 when \(piece(4)) = 'storage' and \(piece(5)) = 'v1' and \(piece(2)) = ''
                      and ((\(piece(6)) = 'object' and \(slashes) = 8) or (\(piece(6)) = 'render' and \(piece(7)) = 'image' and \(slashes) = 9))
                      and \(access) in ('public', 'authenticated', 'sign')
                      and (\(piece(1)) = 'https:' or \(piece(1)) ~ '\(schemeColon)') and \(piece(3)) ~ '\(hostName)'
                      and ((\(first) = \(b) and \(plainBucket)) or \(first) ~ '\(plainName)') and \(last) ~ '\(plainTail)'
                 then case when \(first) = \(b) then array[\(last)]
                           when \(access) = \(b) then array[\(first) || '/' || \(last)]
                           else '{}' end
            end
            """
    }

    /// The pieces of `commonURLHead` + `commonURLTail` as `commonNamesSQL` tests them one by one.
    static let schemeColon = "^[A-Za-z][A-Za-z0-9+.-]*:$"
    static let hostName = "^[^/?#[:space:]]*$"
    static let plainQuery = #"^\?[A-Za-z0-9=&_.-]+$"#
    /// A plain name with an optional plain query: the last piece as `plainName` and `plainQuery` read it together.
    static let plainTail = "^" + plainName.dropFirst().dropLast() + "(" + plainQuery.dropFirst().dropLast() + ")?$"

    /// `create function` statements for both functions, and the mention rule's (`ObjectMention`), under `schema`
    /// (`pg_temp` for a run's own copy).
    public static func functionsSQL(schema: String) -> String {
        ObjectMention.functionsSQL(schema: schema) + "\n" + """
        create or replace function \(schema).steward_reference_names(value text, bucket text)
        returns table (name text, loose boolean)
        language plpgsql immutable parallel unsafe
        as $body$\(namesFunctionBody)$body$;
        create or replace function \(schema).steward_reference_matches(name text, loose boolean, object_name text)
        returns boolean
        language sql immutable parallel safe
        as $body$\(matchesFunctionBody)$body$;
        """
    }
}
