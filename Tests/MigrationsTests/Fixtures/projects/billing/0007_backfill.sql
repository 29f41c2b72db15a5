update public.prices set currency = 'usd' where currency is null;
insert into public.products (id, active, name) values ('free', true, 'Free plan') on conflict (id) do nothing;
