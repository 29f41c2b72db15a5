create extension if not exists citext;

create table public.notes (
  id uuid primary key default gen_random_uuid(),
  owner uuid not null default auth.uid() references auth.users on delete cascade,
  title citext not null,
  body text,
  search tsvector generated always as (to_tsvector('english'::regconfig, coalesce(body, ''))) stored,
  created_at timestamptz not null default now(),
  constraint notes_title_length check (char_length(title::text) <= 200)
);
create index notes_search_idx on public.notes using gin (search);
create index on public.notes (owner, created_at desc);
