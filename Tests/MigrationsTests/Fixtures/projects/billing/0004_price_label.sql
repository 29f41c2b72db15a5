alter table public.prices rename column description to label;
comment on column public.prices.label is 'Shown on the pricing page.';
alter table public.prices alter column currency set default 'usd';

-- Two functions of one name, and a procedure.
create function public.price_label(p public.prices) returns text
language sql stable set search_path = '' as $$ select coalesce(p.label, p.id) $$;
create function public.price_label(price_id text) returns text
language sql stable set search_path = '' as $$
  select public.price_label(pr) from public.prices pr where pr.id = price_label.price_id
$$;
create procedure public.deactivate_product(pid text)
language sql as $$ update public.products set active = false where id = pid $$;
