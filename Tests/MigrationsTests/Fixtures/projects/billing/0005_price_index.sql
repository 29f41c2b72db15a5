-- steward:no-transaction
create index concurrently if not exists prices_product_idx on public.prices (product_id);
