-- A file the Supabase CLI applied (supabase db push) and Steward took over is recorded with method 'supabase-cli'.
alter table steward.schema_migrations drop constraint schema_migrations_method_check;
alter table steward.schema_migrations add constraint schema_migrations_method_check
  check (method in ('apply', 'adopt', 'supabase-cli'));
