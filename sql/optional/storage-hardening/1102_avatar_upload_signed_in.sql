-- Opt-in: only signed-in users may upload avatars (the seed's INSERT policy names no role, so anon may upload).
alter policy "Anyone can upload an avatar." on storage.objects
  to authenticated;
