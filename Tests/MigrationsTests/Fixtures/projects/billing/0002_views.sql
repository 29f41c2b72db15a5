create view public.active_prices with (security_invoker = on) as
  select p.id, p.product_id, p.unit_amount, p.currency, p.interval
  from public.prices p join public.products pr on pr.id = p.product_id
  where p.active and pr.active;

create materialized view public.price_counts as
  select product_id, count(*) as prices from public.prices group by product_id;
create unique index on public.price_counts (product_id);
revoke all on public.price_counts from anon, authenticated;
