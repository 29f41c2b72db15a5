alter table public.notes enable row level security;
create policy "Owners manage notes" on public.notes for all to authenticated
  using (owner = (select auth.uid())) with check (owner = (select auth.uid()));
