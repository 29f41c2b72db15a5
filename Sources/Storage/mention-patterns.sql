declare
  segment text := split_part(rtrim(name, '/'), '/', -1);
  stripped text;
  forms text[];
  e text;
begin
  forms := array[segment];
  if getdatabaseencoding() = 'UTF8' and octet_length(segment) <> length(segment) then
    stripped := regexp_replace(segment, '{{invisible}}', '', 'g');
    foreach e in array array[normalize(segment, NFC), normalize(segment, NFD), stripped, normalize(stripped, NFC), normalize(stripped, NFD)] loop
      if not e = any(forms) then forms := forms || e; end if;
    end loop;
  end if;
  return forms;
end;
