-- Opt-in: projects made before 2026 grant every new table in public to anon and authenticated with ALL privileges,
-- TRUNCATE included, and row level security does not cover TRUNCATE: any client could empty public.profiles.
-- No client needs it (the app reads and writes single rows). A no-op where the grant was never given.
-- Enable with [migrations] include = sql/optional/api-hardening.
revoke truncate on public.profiles from anon, authenticated;
