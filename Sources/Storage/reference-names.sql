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
  if value ~ '{{plainName}}' then
    name := value; loose := false;
    return next;
    return;
  end if;
  -- The common URL (getPublicUrl, a signed URL, a transform, a cache-buster) with a plain name: the same names the
  -- full reading below gives (with and without its query), without it.
  m := regexp_match(value, '{{commonURLHead}}'
                           '{{commonURLTail}}');
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
