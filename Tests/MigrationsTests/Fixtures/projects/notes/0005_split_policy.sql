-- One policy for everything becomes one per command.
drop policy "Owners manage notes" on public.notes;
create policy "Owners read notes" on public.notes for select to authenticated using (owner = (select auth.uid()));
create policy "Owners write notes" on public.notes for insert to authenticated with check (owner = (select auth.uid()));
create policy "Owners change notes" on public.notes for update to authenticated
  using (owner = (select auth.uid())) with check (owner = (select auth.uid()));
create policy "Owners delete notes" on public.notes for delete to authenticated using (owner = (select auth.uid()));
