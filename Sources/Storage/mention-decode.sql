declare
  parts text[] := '{}';
  p text[];
  e text;
  code int;
  named jsonb;
begin
  -- Pieces are gathered in an array and joined once: appending to a text in a loop would copy it each time.
  if how = 1 or how = 2 then
    if how = 2 then
      if strpos(t, '+') = 0 then return t; end if;
      t := replace(t, '+', ' ');
    end if;
    if t !~ '%[0-9A-Fa-f]{2}' then return t; end if;
    for p in select x.p from regexp_matches(t, '((?:%[0-9A-Fa-f]{2})+)|([^%]+|%)', 'g') as x(p) loop
      if p[1] is null then parts := parts || p[2]; continue; end if;
      begin
        parts := parts || convert_from(decode(replace(p[1], '%', ''), 'hex'), 'UTF8');
      exception when others then
        parts := parts || (select string_agg(case when u.e ~ '^(0[1-9A-Fa-f]|[1-7][0-9A-Fa-f])$' then chr(('x' || u.e)::bit(8)::int) else '%' || u.e end, '' order by u.i)
                           from unnest(string_to_array(substr(p[1], 2), '%')) with ordinality as u(e, i));
      end;
    end loop;
    return array_to_string(parts, '');
  elsif how = 3 then
    if strpos(t, chr(92)) = 0 then return t; end if;
    begin
      for p in select x.p from regexp_matches(t, '(\\u[dD][89abAB][0-9A-Fa-f]{2}\\u[dD][c-fC-F][0-9A-Fa-f]{2}|\\u[0-9A-Fa-f]{4}|\\u\{[0-9A-Fa-f]{1,6}\}|\\U[0-9A-Fa-f]{8}|\\x[0-9A-Fa-f]{2}|\\["\\/bfnrt''])|([^\\]+|\\)', 'g') as x(p) loop
        if p[1] is null then parts := parts || p[2]; continue; end if;
        e := p[1];
        if length(e) = 2 then
          parts := parts || case substr(e, 2) when 'b' then chr(8) when 'f' then chr(12) when 'n' then chr(10) when 'r' then chr(13) when 't' then chr(9) else substr(e, 2) end;
          continue;
        end if;
        if length(e) = 12 and substr(e, 7, 1) = chr(92) then
          code := 65536 + (('x' || substr(e, 3, 4))::bit(16)::int - 55296) * 1024 + (('x' || substr(e, 9, 4))::bit(16)::int - 56320);
        elsif substr(e, 3, 1) = '{' then
          code := ('x' || lpad(substr(e, 4, length(e) - 4), 8, '0'))::bit(32)::int;
        else
          code := ('x' || lpad(substr(e, 3), 8, '0'))::bit(32)::int;
        end if;
        parts := parts || case when code between 1 and 1114111 and code not between 55296 and 57343 then chr(code) else e end;
      end loop;
      return array_to_string(parts, '');
    exception when others then
      return t;
    end;
  else
    if strpos(t, '&') = 0 then return t; end if;
    begin
      for p in select x.p from regexp_matches(t, '&(#[xX][0-9A-Fa-f]{1,6}|#[0-9]{1,7}|[A-Za-z][A-Za-z0-9]{1,31})(;?)|([^&]+|&)', 'g') as x(p) loop
        if p[1] is null then parts := parts || p[3]; continue; end if;
        code := null;
        if p[1] ~ '^#[xX]' then
          code := ('x' || lpad(substr(p[1], 3), 8, '0'))::bit(32)::int;
        elsif p[1] ~ '^#' then
          code := substr(p[1], 2)::int;
        else
          named := coalesce(named, '{{entities}}'::jsonb);
          if named ? p[1] then parts := parts || (named ->> p[1]); continue; end if;
        end if;
        parts := parts || case when code between 1 and 1114111 and code not between 55296 and 57343 then chr(code) else '&' || p[1] || p[2] end;
      end loop;
      return array_to_string(parts, '');
    exception when others then
      return t;
    end;
  end if;
end;
