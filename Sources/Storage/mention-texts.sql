declare
  forms text[] := array[value];
  level text[] := array[value];
  deeper text[];
  plain text[];
  t text;
  d text;
  e text;
begin
  if value is null then return '{}'; end if;
  if octet_length(value) > {{largeValue}} then
    foreach e in array array['1', '2'] loop
      t := value;
      for pass in 1 .. 4 loop
        t := {{schema}}.steward_mention_decode({{schema}}.steward_mention_decode({{schema}}.steward_mention_decode(t, 4), 3), e::int);
        exit when t = any(forms);
        forms := forms || t;
      end loop;
    end loop;
  else
    <<rounds>>
    for pass in 1 .. 4 loop
      deeper := '{}';
      foreach t in array level loop
        for how in 1 .. 4 loop
          d := {{schema}}.steward_mention_decode(t, how);
          if d is not null and not d = any(forms) then
            forms := forms || d;
            deeper := deeper || d;
            exit rounds when cardinality(forms) >= {{maximumTexts}};
          end if;
        end loop;
      end loop;
      exit when cardinality(deeper) = 0;
      level := deeper;
    end loop;
  end if;
  if getdatabaseencoding() = 'UTF8' then
    plain := forms;
    foreach t in array plain loop
      continue when octet_length(t) = length(t);
      d := regexp_replace(t, '{{invisible}}', '', 'g');
      foreach e in array array[d, normalize(t, NFC), normalize(t, NFD), normalize(d, NFC), normalize(d, NFD)] loop
        if not e = any(forms) then forms := forms || e; end if;
      end loop;
    end loop;
  end if;
  return forms;
end;
