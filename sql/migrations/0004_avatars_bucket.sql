-- Set up Storage!
insert into storage.buckets (id, name)
  values ('avatars', 'avatars');
