-- Opt-in: row level security for the hand-made "User" table of the older tutorial (id, "userID" text, name, email).
-- A signed-in user reads, inserts and updates only the row whose "userID" is their auth.uid(); anon gets nothing.
-- The app keeps working once it signs users in with the anon key instead of shipping the service key.
-- Enable with [migrations] include = sql/optional/legacy-user-table.
alter table public."User" enable row level security;

revoke all on table public."User" from anon, authenticated;
grant select, insert, update on table public."User" to authenticated;
grant usage, select on sequence public."User_id_seq" to authenticated;

-- (select auth.uid()) is evaluated once per query, not once per row; the text compare keeps any row readable.
create policy "Users read their own row." on public."User"
  for select to authenticated using ("userID" = (select auth.uid())::text);
create policy "Users add their own row." on public."User"
  for insert to authenticated with check ("userID" = (select auth.uid())::text);
create policy "Users update their own row." on public."User"
  for update to authenticated using ("userID" = (select auth.uid())::text) with check ("userID" = (select auth.uid())::text);
