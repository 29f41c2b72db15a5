-- Realtime: the publication the platform makes, with the chat's tables in it.
alter publication supabase_realtime add table public.channels, public.messages;
alter table public.messages replica identity full;
alter table public.channels replica identity full;
