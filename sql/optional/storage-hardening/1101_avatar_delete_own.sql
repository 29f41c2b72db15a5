-- Opt-in: signed-in users may delete their own avatars (the seed has no DELETE policy, so apps cannot
-- remove an old avatar when they upload a new one). Enable with [migrations] include = sql/optional/storage-hardening.
create policy "Users can delete their own avatar." on storage.objects
  for delete to authenticated using (bucket_id = 'avatars' and (select auth.uid()) = owner);
