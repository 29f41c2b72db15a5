-- Opt-in, after 1201 and 1202: the integrity trigger's function is SECURITY DEFINER, so no client role may call it
-- (Supabase's Security Advisor flags a SECURITY DEFINER function that anon or authenticated may execute through
-- /rest/v1/rpc). A trigger runs its function whatever EXECUTE says, so the check on profiles keeps working.
-- Enable with [migrations] include = sql/optional/avatar-integrity.
revoke execute on function public.avatar_object_exists() from public, anon, authenticated;
