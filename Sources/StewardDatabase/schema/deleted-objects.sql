-- The audit trail of the orphan-avatars job (owner: OrphanAvatars). Needs steward-schema.sql.
create table steward.deleted_objects (
  run_id bigint not null,
  bucket_id text not null,
  name text not null,
  size bigint,
  owner text,
  object_created_at timestamptz,
  deleted_at timestamptz,
  primary key (run_id, bucket_id, name)
);
comment on table steward.deleted_objects is 'Every object the orphan-avatars job deleted through the Storage API. deleted_at is null while a deletion is in flight; the next run settles such rows.';
create index deleted_objects_pending on steward.deleted_objects (bucket_id, name) where deleted_at is null;
