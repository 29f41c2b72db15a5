alter type public.subscription_status add value if not exists 'paused';
