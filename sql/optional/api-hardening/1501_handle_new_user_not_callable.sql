-- Opt-in: the quickstart's sign-up function public.handle_new_user() is SECURITY DEFINER and, as every new function,
-- executable by PUBLIC (and by anon and authenticated through Supabase's default privileges): Supabase's Security
-- Advisor flags it as callable through /rest/v1/rpc with its owner's rights. Only the trigger on auth.users needs
-- it, and a trigger runs its function whatever EXECUTE says: sign-up keeps creating the profile.
-- Enable with [migrations] include = sql/optional/api-hardening.
revoke execute on function public.handle_new_user() from public, anon, authenticated;
