-- Steward local shim, part 3 of 4: the `storage` schema as Supabase Storage creates it.
-- Run as the cluster superuser in the target database, after 10_auth.sql.
\set ON_ERROR_STOP on

create schema storage authorization supabase_storage_admin;
comment on schema storage is 'steward local shim: stand-in for Supabase Storage; never apply to a real project';
grant usage on schema storage to anon, authenticated, service_role, postgres;

create type storage.buckettype as enum ('STANDARD', 'ANALYTICS', 'VECTOR');

create table storage.buckets (
  id text not null primary key,
  name text not null,
  owner uuid,
  owner_id text,
  created_at timestamptz default now(),
  updated_at timestamptz default now(),
  public boolean default false,
  avif_autodetection boolean default false,
  file_size_limit bigint,
  allowed_mime_types text[],
  type storage.buckettype not null default 'STANDARD',
  versioning_status text not null default 'DISABLED'
);
create unique index bname on storage.buckets using btree (name);

create table storage.objects (
  id uuid not null default gen_random_uuid() primary key,
  bucket_id text references storage.buckets (id),
  name text,
  owner uuid,
  owner_id text,
  created_at timestamptz default now(),
  updated_at timestamptz default now(),
  last_accessed_at timestamptz default now(),
  metadata jsonb,
  path_tokens text[] generated always as (string_to_array(name, '/')) stored,
  version text,
  user_metadata jsonb,
  archived_at timestamptz,
  is_delete_marker boolean not null default false,
  is_versioned boolean not null default false
);
create unique index bucketid_objname on storage.objects using btree (bucket_id, name);
create index name_prefix_search on storage.objects using btree (name text_pattern_ops);

alter table storage.buckets enable row level security;
alter table storage.objects enable row level security;

create function storage.enforce_bucket_name_length() returns trigger
language plpgsql
as $$
begin
  if length(new.name) > 100 then
    raise exception 'bucket name "%" is too long (% characters). Max is 100.', new.name, length(new.name);
  end if;
  return new;
end
$$;
create trigger enforce_bucket_name_length_trigger
  before insert or update of name on storage.buckets
  for each row execute function storage.enforce_bucket_name_length();

create function storage.update_updated_at_column() returns trigger
language plpgsql
as $$
begin
  new.updated_at = now();
  return new;
end
$$;
create trigger update_objects_updated_at
  before update on storage.objects
  for each row execute function storage.update_updated_at_column();

-- The delete guard (Storage migration 0055): rows go only through the Storage API,
-- which sets storage.allow_delete_query = 'true' for its own transaction.
create function storage.protect_delete() returns trigger
language plpgsql
as $$
begin
  if coalesce(current_setting('storage.allow_delete_query', true), '') <> 'true' then
    raise exception 'Direct deletion from storage tables is not allowed. Use the Storage API instead.'
      using errcode = '42501';
  end if;
  return null;
end
$$;
create trigger protect_buckets_delete
  before delete on storage.buckets
  for each statement execute function storage.protect_delete();
create trigger protect_objects_delete
  before delete on storage.objects
  for each statement execute function storage.protect_delete();

create function storage.foldername(name text) returns text[]
language plpgsql immutable
as $$
declare
  _parts text[];
begin
  select string_to_array(name, '/') into _parts;
  return _parts[1 : array_length(_parts, 1) - 1];
end
$$;

create function storage.filename(name text) returns text
language plpgsql immutable
as $$
declare
  _parts text[];
begin
  select string_to_array(name, '/') into _parts;
  return _parts[array_length(_parts, 1)];
end
$$;

create function storage.extension(name text) returns text
language plpgsql immutable
as $$
declare
  _filename text;
begin
  select storage.filename(name) into _filename;
  return reverse(split_part(reverse(_filename), '.', 1));
end
$$;

create function storage.operation() returns text
language plpgsql stable
as $$
begin
  return current_setting('storage.operation', true);
end
$$;

create function storage.allow_only_operation(expected_operation text) returns boolean
language sql stable
as $$
  with normalized as (
    select case when op like 'storage.%' then substr(op, 9) else op end as op
    from (select storage.operation() as op) current_operation
  )
  select coalesce(op = expected_operation, false) from normalized
$$;

create function storage.allow_any_operation(expected_operations text[]) returns boolean
language sql stable
as $$
  with normalized as (
    select case when op like 'storage.%' then substr(op, 9) else op end as op
    from (select storage.operation() as op) current_operation
  )
  select coalesce(op = any (expected_operations), false) from normalized
$$;

alter table storage.buckets owner to supabase_storage_admin;
alter table storage.objects owner to supabase_storage_admin;
alter type storage.buckettype owner to supabase_storage_admin;
alter function storage.enforce_bucket_name_length() owner to supabase_storage_admin;
alter function storage.update_updated_at_column() owner to supabase_storage_admin;
alter function storage.protect_delete() owner to supabase_storage_admin;
alter function storage.foldername(text) owner to supabase_storage_admin;
alter function storage.filename(text) owner to supabase_storage_admin;
alter function storage.extension(text) owner to supabase_storage_admin;
alter function storage.operation() owner to supabase_storage_admin;
alter function storage.allow_only_operation(text) owner to supabase_storage_admin;
alter function storage.allow_any_operation(text[]) owner to supabase_storage_admin;

grant all on storage.buckets, storage.objects to anon, authenticated, service_role;
-- postgres is no member of supabase_storage_admin (since 2025): it has the tables' privileges, with grant option,
-- but not the owner's powers (policies, ALTER TABLE, the delete guard's trigger). Policies on storage.objects come
-- from supautils on the platform; locally from the stand-in (supautils_stand_in.c), which a database may leave out.
grant all on storage.buckets, storage.objects to postgres with grant option;
