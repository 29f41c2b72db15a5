insert into storage.buckets (id, name, public, file_size_limit, allowed_mime_types)
values ('attachments', 'attachments', false, 10485760, array['image/png', 'image/jpeg', 'application/pdf'])
on conflict (id) do nothing;
insert into storage.buckets (id, name, public) values ('public-assets', 'public-assets', true);

create policy "Users read their own attachments" on storage.objects for select to authenticated
  using (bucket_id = 'attachments' and (storage.foldername(name))[1] = (select auth.uid()::text));
create policy "Users upload their own attachments" on storage.objects for insert to authenticated
  with check (bucket_id = 'attachments' and (storage.foldername(name))[1] = (select auth.uid()::text));
create policy "Users delete their own attachments" on storage.objects for delete to authenticated
  using (bucket_id = 'attachments' and owner = (select auth.uid()));
create policy "Public assets are readable" on storage.objects for select using (bucket_id = 'public-assets');
