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
    /// returns table (name text, loose boolean)`, in PL/pgSQL; it reads no table and calls only `pg_catalog`.
    public static let namesFunctionBody = #"""

declare
  space constant text := '[[:space:]\u0085\u00a0\u1680\u2000-\u200b\u2028\u2029\u202f\u205f\u3000\ufeff]';
  forms text[];
  readings text[];
  texts text[] := '{}';
  emitted text[];
  separator text;
  parse boolean;
  decodings text[];
  found text[] := '{}';
  unsure boolean := false;
  v text;
  path text;
  r text;
  d text;
  e text;
  n text;
  m text[];
  recognised boolean;
  bytes bytea;
  segments text[];
  kept text[];
  segment text;
begin
  if value is null or value = '' then
    return;
  end if;
  -- The common case (a bare name such as the seed's <uuid>.jpeg) needs no further reading.
  if value ~ '\#(plainName)' then
    name := value; loose := false;
    return next;
    return;
  end if;
  -- The common URL (getPublicUrl, a signed URL, a transform, a cache-buster) with a plain name: the same names the
  -- full reading below gives (with and without its query), without it.
  m := regexp_match(value, '\#(commonURLHead)'
                           '\#(commonURLTail)');
  if m is not null then
    loose := false;
    if m[2] = bucket then
      if m[4] is not null then
        name := m[3] || m[4];
        return next;
      end if;
      name := m[3];
      return next;
    end if;
    if m[1] = bucket then
      if m[4] is not null then
        name := m[2] || '/' || m[3] || m[4];
        return next;
      end if;
      name := m[2] || '/' || m[3];
      return next;
    end if;
    return;
  end if;
  v := value;
  if v ~ ('^' || space) or v ~ (space || '$') then
    v := regexp_replace(regexp_replace(v, '^' || space || '+', ''), space || '+$', '');
  end if;
  forms := array[value];
  if v <> value and v <> '' then
    forms := forms || v;
  end if;
  foreach v in array forms loop
    parse := true;
    if v = value and array_length(forms, 1) > 1 then
      -- As written, surrounding whitespace included: only the name it spells (the trimmed form is read below).
      found := found || v;
      continue;
    end if;
    if v ~ '^[A-Za-z][A-Za-z0-9+.-]*://' or v ~ '^//' then
      -- A URL: the scheme (any case) and the host (any host: custom domains) are dropped; the path must be Storage's.
      path := regexp_replace(v, '^([A-Za-z][A-Za-z0-9+.-]*:)?//[^/?#]*', '');
      if position('/storage/v1/' in lower(path)) = 0 then
        unsure := true;
        path := v;
        parse := false;
      end if;
    elsif v ~* '^/*storage/v1/' then
      path := v;
    else
      path := null;
      -- Something with a scheme but no `//`, or a URL inside the value: not understood for certain.
      if v ~ '^[A-Za-z][A-Za-z0-9+.-]*:' or position('://' in v) > 0 then
        unsure := true;
      end if;
      -- A name Storage accepts holds only S3-safe characters (and letters of any script): a path with others (JSON,
      -- markup, a backslash, control characters) is not understood for certain.
      if split_part(split_part(v, '#', 1), '?', 1) ~ '[^A-Za-z0-9_/!.*''() &$@=;:+,%~-]' and
         regexp_replace(split_part(split_part(v, '#', 1), '?', 1), '[^\x01-\x7f]', '', 'g') ~ '[^A-Za-z0-9_/!.*''() &$@=;:+,%~-]' then
        unsure := true;
      end if;
    end if;
    -- Every reading: as written, without the fragment, without the query, without both.
    -- Every reading: as written, and cut before each `#`, then before each `?` (a name may hold a `?` itself).
    readings := array[coalesce(path, v)];
    foreach separator in array array['#', '?'] loop
      kept := readings;
      foreach r in array kept loop
        segments := string_to_array(r, separator);
        if array_length(segments, 1) > 21 then
          unsure := true;
        end if;
        n := segments[1];
        for i in 2 .. least(coalesce(array_length(segments, 1), 0), 21) loop
          readings := readings || n;
          n := n || separator || segments[i];
        end loop;
      end loop;
    end loop;
    texts := texts || readings;
    if not parse then
      continue;
    end if;
    recognised := false;
    foreach r in array readings loop
      -- The readings decoded: percent-escapes (`%2F` becomes `/` here; the undecoded reading keeps `%2F` as
      -- written), a second time for a value encoded twice, and `+` read as a space (form encoding).
      decodings := array[r];
      if position('+' in r) > 0 then
        decodings := decodings || replace(r, '+', ' ');
      end if;
      d := r;
      for pass in 1 .. 2 loop
        exit when d !~ '%[0-9A-Fa-f]{2}';
        begin
          select string_agg(case when x.p[1] is not null then decode(substr(x.p[1], 2), 'hex')
                                 else convert_to(x.p[2], 'UTF8') end, ''::bytea order by x.i)
            into bytes
            from regexp_matches(d, '(%[0-9A-Fa-f]{2})|([^%]+|%)', 'g') with ordinality as x(p, i);
          d := convert_from(bytes, 'UTF8');
        exception when others then
          unsure := true;
          exit;
        end;
        decodings := decodings || d;
        if position('+' in d) > 0 then
          decodings := decodings || replace(d, '+', ' ');
        end if;
      end loop;
      -- The readings as a client stores them before it uploads: supabase-js drops a leading and a trailing `/` and
      -- runs of `/` (the app keeps `u//a.png`, Storage holds `u/a.png`); a browser reads `\` as `/` in a URL; a name
      -- encoded with whitespace around it (`a.png%20`) is the name without it.
      kept := decodings;
      foreach d in array kept loop
        if d ~ ('//|/$|^' || space || '|' || space || '$') or position(chr(92) in d) > 0 then
          foreach e in array array[d, replace(d, chr(92), '/')] loop
            e := regexp_replace(regexp_replace(e, '^' || space || '+', ''), space || '+$', '');
            e := rtrim(regexp_replace(e, '/{2,}', '/', 'g'), '/');
            if e <> '' and not e = any(decodings) then
              decodings := decodings || e;
            end if;
          end loop;
        end if;
      end loop;
      foreach d in array decodings loop
        foreach e in array array[d, null] loop
          if e is null then
            -- Dot segments removed (`a/./b` is `a/b`, `a/x/../b` is `a/b`).
            if d !~ '(^|/)\.\.?(/|$)' then
              continue;
            end if;
            segments := string_to_array(d, '/');
            kept := '{}';
            for i in 1 .. coalesce(array_length(segments, 1), 0) loop
              segment := segments[i];
              if segment = '.' then
                if i = array_length(segments, 1) then kept := kept || ''::text; end if;
              elsif segment = '..' then
                kept := kept[1:greatest(coalesce(array_length(kept, 1), 0) - 1, 0)];
                if i = array_length(segments, 1) then kept := kept || ''::text; end if;
              else
                kept := kept || segment;
              end if;
            end loop;
            e := array_to_string(kept, '/');
          end if;
          if path is not null then
            -- Storage's routes: object (public, authenticated, sign, info, upload/sign or none) and render/image.
            if lower(e) ~ '^/*storage/v1/' then
              n := regexp_replace(e, '^/*[Ss][Tt][Oo][Rr][Aa][Gg][Ee]/[Vv]1/', '');
            elsif position('/storage/v1/' in lower(e)) > 0 then
              n := substr(e, position('/storage/v1/' in lower(e)) + length('/storage/v1/'));
            else
              continue;
            end if;
            m := regexp_match(n, '^(?:object|render/image)/(?:public|authenticated|sign|info|upload/sign)/([^/]+)/(.+)$', 'i');
            if m is not null then
              recognised := true;
              if m[1] = bucket then found := found || m[2]; end if;
            end if;
            m := regexp_match(n, '^(?:object|render/image)/([^/]+)/(.+)$', 'i');
            if m is not null then
              recognised := true;
              if m[1] = bucket then found := found || m[2]; end if;
            end if;
          else
            -- A path: the name as written, without leading slashes, and without a leading bucket (`avatars/x`).
            recognised := true;
            foreach n in array array[e, ltrim(e, '/')] loop
              if n <> '' then
                found := found || n;
                if left(n, length(bucket) + 1) = bucket || '/' and length(n) > length(bucket) + 1 then
                  found := found || substr(n, length(bucket) + 2);
                end if;
              end if;
            end loop;
          end if;
        end loop;
      end loop;
    end loop;
    if not recognised then
      unsure := true;
    end if;
  end loop;
  emitted := '{}';
  foreach n in array found loop
    if n <> '' and not n = any(emitted) then
      emitted := emitted || n;
      name := n; loose := false;
      return next;
    end if;
  end loop;
  if unsure then
    -- Not understood for certain: every reading protects what ends it.
    -- Also each run of characters a name may hold, the value cut at those it may not (quotes, brackets, controls):
    -- `{"path":"a.jpeg"}` keeps a.jpeg; and, besides, cut at commas too (a list: an array column read as text):
    -- `{a.jpeg,b.jpeg}` keeps a.jpeg.
    texts := texts || regexp_split_to_array(forms[array_length(forms, 1)], '[\x01-\x1f\x7f"<>\\^`{|}#\[\]]+');
    if position(',' in forms[array_length(forms, 1)]) > 0 then
      texts := texts || regexp_split_to_array(forms[array_length(forms, 1)], '[\x01-\x1f\x7f"<>\\^`{|}#\[\],]+');
    end if;
    -- Each reading also as a client stores it before it uploads (runs of `/` and a trailing `/` dropped): an upload
    -- path whose first folder ends with `:` (`a://b/` for the object a:/b) reads as a URL that is not Storage's.
    for n in select distinct y.x from unnest(forms || texts) t(x),
               lateral (values (t.x), (rtrim(regexp_replace(t.x, '/{2,}', '/', 'g'), '/'))) y(x) where y.x <> '' loop
      name := n; loose := true;
      return next;
      begin
        if position('%' in n) > 0 then
          select string_agg(case when x.p[1] is not null then decode(substr(x.p[1], 2), 'hex')
                                 else convert_to(x.p[2], 'UTF8') end, ''::bytea order by x.i)
            into bytes
            from regexp_matches(n, '(%[0-9A-Fa-f]{2})|([^%]+|%)', 'g') with ordinality as x(p, i);
          d := convert_from(bytes, 'UTF8');
          if d <> n then
            name := d; loose := true;
            return next;
          end if;
        end if;
      exception when others then
        null;
      end;
    end loop;
  end if;
  return;
end;
"""#

    /// The body of `matches(name text, loose boolean, object_name text) returns boolean` (SQL): whether one row of
    /// `names` protects `object_name`. Names compare byte for byte (`=` on text is deterministic).
    public static let matchesFunctionBody = #"""

  select case when not loose then name = object_name
              else right(name, length(object_name)) = object_name
                or right(name, length(split_part(object_name, '/', -1))) = split_part(object_name, '/', -1) end
"""#

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
