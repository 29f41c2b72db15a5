alter table public.channels add column description text;
alter table public.channels alter column slug set data type varchar(64);
create index on public.messages (channel_id);
create index messages_user_idx on public.messages (user_id) where user_id is not null;
comment on column public.channels.description is 'Shown under the channel name.';
