-- What one configured reference column is ($1 schema, $2 table, $3 column; no row: not a column this role can see):
-- its type, whether that type can hold an object's name or URL (a string type or a domain over one, json, jsonb, or
-- an array of those), whether its rows have a ctid of their own (a plain table without inheritance children, or a
-- materialised view) and whether they carry xmin (a plain or partitioned table).
select format_type(a.atttypid, a.atttypmod),
       coalesce(e.typcategory, t.typcategory)::text = 'S' or coalesce(e.typname, t.typname)::text in ('json', 'jsonb'),
       r.relkind::text in ('r', 'm') and not r.relhassubclass,
       r.relkind::text in ('r', 'p')
from pg_attribute a
join pg_class r on r.oid = a.attrelid
join pg_type t on t.oid = a.atttypid
left join pg_type e on e.oid = t.typelem and t.typcategory = 'A'
where a.attrelid = to_regclass(format('%I.%I', $1::text, $2::text)) and a.attname = $3 and a.attnum > 0 and not a.attisdropped
