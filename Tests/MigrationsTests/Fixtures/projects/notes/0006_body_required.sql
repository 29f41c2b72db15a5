update public.notes set body = '' where body is null;
alter table public.notes alter column body set default '';
alter table public.notes alter column body set not null;
