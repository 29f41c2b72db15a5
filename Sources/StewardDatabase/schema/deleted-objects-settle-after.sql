-- When an in-flight deletion can no longer land (owner: OrphanAvatars). Needs deleted-objects.sql.
alter table steward.deleted_objects add column settle_after timestamptz;
comment on column steward.deleted_objects.settle_after is 'While deleted_at is null: the time after which no DELETE request of the run that wrote the row can still land (its fence wait, re-check and request timeout from the intent, and a second). The next run settles the row only after it; null on rows written before version 8 (that run waits its own request timeout instead).';
