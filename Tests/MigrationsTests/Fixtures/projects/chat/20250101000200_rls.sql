alter table public.users enable row level security;
alter table public.channels enable row level security;
alter table public.messages enable row level security;
alter table public.user_roles enable row level security;
alter table public.role_permissions enable row level security;

create policy "Allow logged-in read access" on public.users for select using (auth.role() = 'authenticated');
create policy "Allow individual insert access" on public.users for insert with check ((select auth.uid()) = id);
create policy "Allow individual update access" on public.users for update using ((select auth.uid()) = id);
create policy "Allow logged-in read access" on public.channels for select using (auth.role() = 'authenticated');
create policy "Allow individual insert access" on public.channels for insert with check ((select auth.uid()) = created_by);
create policy "Allow individual delete access" on public.channels for delete using ((select auth.uid()) = created_by);
create policy "Allow authorized delete access" on public.channels for delete
  using (public.authorize('channels.delete', (select auth.uid())));
-- A policy that reads its own table: members of a channel see its messages.
create policy "Channel members read messages" on public.messages for select to authenticated
  using (exists (select 1 from public.messages m where m.channel_id = messages.channel_id and m.user_id = (select auth.uid())));
create policy "Allow individual insert access" on public.messages for insert with check ((select auth.uid()) = user_id);
create policy "Allow individual update access" on public.messages for update using ((select auth.uid()) = user_id);
create policy "Allow authorized delete access" on public.messages for delete
  using (public.authorize('messages.delete', (select auth.uid())));
create policy "Allow individual read access" on public.user_roles for select using ((select auth.uid()) = user_id);
