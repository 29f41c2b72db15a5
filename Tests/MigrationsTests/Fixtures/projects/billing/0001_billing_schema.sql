-- Customers, products, prices and subscriptions kept in step with a payment provider.
create schema if not exists extensions;
create extension if not exists "uuid-ossp" with schema extensions;

create table public.users (
  id uuid not null primary key references auth.users,
  full_name text,
  avatar_url text,
  billing_address jsonb,
  payment_method jsonb
);
alter table public.users enable row level security;
create policy "Can view own user data." on public.users for select using (auth.uid() = id);
create policy "Can update own user data." on public.users for update using (auth.uid() = id);

create table public.customers (
  id uuid not null primary key references auth.users,
  stripe_customer_id text
);
alter table public.customers enable row level security;

create table public.products (
  id text primary key,
  active boolean,
  name text,
  description text,
  image text,
  metadata jsonb
);
alter table public.products enable row level security;
create policy "Allow public read-only access." on public.products for select using (true);

create type public.pricing_type as enum ('one_time', 'recurring');
create type public.pricing_plan_interval as enum ('day', 'week', 'month', 'year');
create table public.prices (
  id text primary key,
  product_id text references public.products,
  active boolean,
  description text,
  unit_amount bigint,
  currency text check (char_length(currency) = 3),
  type public.pricing_type,
  interval public.pricing_plan_interval,
  interval_count integer,
  trial_period_days integer,
  metadata jsonb
);
alter table public.prices enable row level security;
create policy "Allow public read-only access." on public.prices for select using (true);

create type public.subscription_status as enum ('trialing', 'active', 'canceled', 'incomplete', 'incomplete_expired', 'past_due', 'unpaid');
create table public.subscriptions (
  id text primary key,
  user_id uuid not null references auth.users,
  status public.subscription_status,
  metadata jsonb,
  price_id text references public.prices,
  quantity integer,
  cancel_at_period_end boolean,
  created timestamptz not null default timezone('utc'::text, now()),
  current_period_start timestamptz not null default timezone('utc'::text, now()),
  current_period_end timestamptz not null default timezone('utc'::text, now()),
  ended_at timestamptz default timezone('utc'::text, now())
);
alter table public.subscriptions enable row level security;
create policy "Can only view own subs data." on public.subscriptions for select using (auth.uid() = user_id);
