revoke all on public.customers from anon, authenticated;
grant select on public.products, public.prices to anon;
revoke execute on procedure public.deactivate_product(text) from public;
alter default privileges for role postgres in schema public revoke execute on functions from anon;
