create function public.search_notes(query text) returns setof public.notes
language sql stable set search_path = '' as $$
  select * from public.notes where search @@ plainto_tsquery('english', search_notes.query)
$$;
revoke execute on function public.search_notes(text) from public, anon;
grant execute on function public.search_notes(text) to authenticated;
comment on function public.search_notes(text) is 'Full-text search over the caller''s notes.';
