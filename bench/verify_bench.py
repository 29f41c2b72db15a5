#!/usr/bin/env python3
"""steward verify against steward migrate on a 25-file Supabase-style project, side by side in one run.

The project (written by this script into a temporary folder) has tables that later files alter, enums (one gaining
a value), views, plpgsql and sql functions (one naming its parameter as `function.param`), triggers (one on
auth.users), RLS policies (one whose check reads its own table in a subquery), grants and revokes for anon and
authenticated, indexes, comments, two storage bucket inserts and storage.objects policies.

Each round, on a fresh database made from the shim template:
  (a) `steward migrate` of the 25 files (each file records its catalog groups in its own transaction);
  (b) `steward verify` right after: the recorded state, the common case;
  (c) `steward verify` with the record gone, as after an upgrade from a Steward that kept none
      (`update steward.schema_migrations set catalog_recorded = null; delete from steward.schema_record;`, not
      timed, before each run): it builds the record in a shadow database (CREATE DATABASE … TEMPLATE template0,
      the platform objects copied, the 25 files applied, DROP DATABASE);
  (d) the server's own CREATE DATABASE … TEMPLATE template0 and DROP DATABASE … WITH (FORCE), timed through libpq
      (ctypes) on an open connection as role postgres, as Steward issues them for its shadow.
(c) and (d) swap places every round. Reports median, min and max of each, verify/migrate, and shadow verify against
migrate plus CREATE and DROP DATABASE (target: at most 3).

    bench/run.sh verify           (builds release, starts the local cluster, runs this; a minute or two)

Environment: STEWARD_BINARY (default .build/release/steward), STEWARD_PG_PORT, BENCH_RUNS (rounds, default 9).
"""
import ctypes, ctypes.util, datetime, os, platform, re, statistics, subprocess, sys, tempfile, time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
STEWARD = os.environ.get("STEWARD_BINARY", os.path.join(ROOT, ".build/release/steward"))
PORT = os.environ.get("STEWARD_PG_PORT", "54329")
ADMIN = f"postgresql://supabase_admin:steward-local@127.0.0.1:{PORT}/postgres"
RUNS = int(os.environ.get("BENCH_RUNS", "9"))
DB = "bench_verify"

# The project: a team task tracker on the quickstart's profiles. Later files alter earlier tables, replace a view and
# a policy, add an enum value and revoke what default privileges gave.
PROJECT = {
    "0001_profiles.sql": """
-- Public profiles, one a user.
create table public.profiles (
  id uuid not null references auth.users on delete cascade primary key,
  updated_at timestamptz,
  username text unique,
  full_name text,
  avatar_url text,
  constraint username_length check (char_length(username) >= 3)
);
alter table public.profiles enable row level security;
grant select on public.profiles to anon;
grant select, insert, update on public.profiles to authenticated;
""",
    "0002_profiles_policies.sql": """
create policy "Public profiles are viewable by everyone." on public.profiles
  for select using (true);
create policy "Users can insert their own profile." on public.profiles
  for insert to authenticated with check ((select auth.uid()) = id);
create policy "Users can update own profile." on public.profiles
  for update to authenticated using ((select auth.uid()) = id);
""",
    "0003_handle_new_user.sql": """
-- A profile for every new user (the Auth server inserts into auth.users).
create function public.handle_new_user()
returns trigger
language plpgsql
security definer
set search_path = ''
as $$
begin
  insert into public.profiles (id, full_name, avatar_url)
  values (new.id, new.raw_user_meta_data ->> 'full_name', new.raw_user_meta_data ->> 'avatar_url');
  return new;
end;
$$;
create trigger on_auth_user_created
  after insert on auth.users
  for each row execute procedure public.handle_new_user();
""",
    "0004_enums.sql": """
create type public.team_role as enum ('owner', 'admin', 'member');
create type public.task_status as enum ('todo', 'doing', 'done');
""",
    "0005_teams.sql": """
create table public.teams (
  id bigint generated always as identity primary key,
  name text not null,
  slug text not null unique,
  created_by uuid not null default auth.uid() references auth.users on delete cascade,
  created_at timestamptz not null default now()
);
alter table public.teams enable row level security;
grant select, insert, update, delete on public.teams to authenticated;
""",
    "0006_team_members.sql": """
create table public.team_members (
  team_id bigint not null references public.teams on delete cascade,
  user_id uuid not null references auth.users on delete cascade,
  role public.team_role not null default 'member',
  joined_at timestamptz not null default now(),
  primary key (team_id, user_id)
);
alter table public.team_members enable row level security;
grant select, insert, delete on public.team_members to authenticated;
""",
    "0007_membership.sql": """
-- True when the caller belongs to the team. Security definer, so policies on team_members may call it.
create function public.is_team_member(team_id bigint)
returns boolean
language sql
stable
security definer
set search_path = ''
as $$
  select exists (
    select 1 from public.team_members m
    where m.team_id = is_team_member.team_id and m.user_id = (select auth.uid())
  );
$$;
revoke execute on function public.is_team_member(bigint) from public, anon;
grant execute on function public.is_team_member(bigint) to authenticated;

-- Whoever creates a team owns it.
create function public.add_team_owner()
returns trigger
language plpgsql
security definer
set search_path = ''
as $$
begin
  insert into public.team_members (team_id, user_id, role) values (new.id, new.created_by, 'owner');
  return new;
end;
$$;
create trigger on_team_created
  after insert on public.teams
  for each row execute function public.add_team_owner();
""",
    "0008_team_policies.sql": """
create policy "Members can view their teams" on public.teams
  for select to authenticated using (public.is_team_member(id));
create policy "Signed-in users can create teams" on public.teams
  for insert to authenticated with check ((select auth.uid()) = created_by);
create policy "Members can view their team's members" on public.team_members
  for select to authenticated using (public.is_team_member(team_id));
-- Only an owner adds members: the check reads team_members itself.
create policy "Owners can add members" on public.team_members
  for insert to authenticated
  with check (exists (
    select 1 from public.team_members owner_row
    where owner_row.team_id = team_members.team_id
      and owner_row.user_id = (select auth.uid())
      and owner_row.role = 'owner'
  ));
create policy "Members can leave" on public.team_members
  for delete to authenticated using (user_id = (select auth.uid()));
""",
    "0009_projects.sql": """
create table public.projects (
  id bigint generated always as identity primary key,
  team_id bigint not null references public.teams on delete cascade,
  name text not null,
  archived boolean not null default false,
  created_at timestamptz not null default now()
);
alter table public.projects enable row level security;
grant select, insert, update, delete on public.projects to authenticated;
create policy "Members can view projects" on public.projects
  for select to authenticated using (public.is_team_member(team_id));
create policy "Members can manage projects" on public.projects
  for all to authenticated using (public.is_team_member(team_id)) with check (public.is_team_member(team_id));
""",
    "0010_tasks.sql": """
create table public.tasks (
  id bigint generated always as identity primary key,
  project_id bigint not null references public.projects on delete cascade,
  title text not null check (char_length(title) between 1 and 200),
  status public.task_status not null default 'todo',
  assignee uuid references auth.users on delete set null,
  due_date date,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);
alter table public.tasks enable row level security;
grant select, insert, update, delete on public.tasks to authenticated;
""",
    "0011_updated_at.sql": """
create function public.set_updated_at()
returns trigger
language plpgsql
as $$
begin
  new.updated_at := now();
  return new;
end;
$$;
create trigger tasks_set_updated_at before update on public.tasks
  for each row execute function public.set_updated_at();
create trigger profiles_set_updated_at before update on public.profiles
  for each row execute function public.set_updated_at();
""",
    "0012_task_policies.sql": """
create policy "Members can view tasks" on public.tasks
  for select to authenticated
  using (exists (select 1 from public.projects p where p.id = tasks.project_id and public.is_team_member(p.team_id)));
create policy "Members can add tasks" on public.tasks
  for insert to authenticated
  with check (exists (select 1 from public.projects p where p.id = project_id and public.is_team_member(p.team_id)));
create policy "Members can update tasks" on public.tasks
  for update to authenticated
  using (exists (select 1 from public.projects p where p.id = tasks.project_id and public.is_team_member(p.team_id)));
""",
    "0013_indexes.sql": """
create index tasks_project_status_idx on public.tasks (project_id, status);
create index tasks_open_by_assignee_idx on public.tasks (assignee) where status <> 'done';
create index projects_team_idx on public.projects (team_id);
""",
    "0014_profiles_bio.sql": """
alter table public.profiles add column bio text, add column website text;
alter table public.profiles add constraint bio_length check (char_length(bio) <= 500);
comment on table public.profiles is 'One row a user, made by the on_auth_user_created trigger.';
comment on column public.profiles.bio is 'Shown on the public profile page; at most 500 characters.';
""",
    "0015_task_priority.sql": """
create type public.task_priority as enum ('low', 'normal', 'high');
alter table public.tasks add column priority public.task_priority not null default 'normal';
alter type public.task_status add value 'blocked' after 'doing';
""",
    "0016_views.sql": """
create view public.team_task_counts with (security_invoker = true) as
  select p.team_id, t.status, count(*) as tasks
  from public.tasks t join public.projects p on p.id = t.project_id
  group by p.team_id, t.status;
grant select on public.team_task_counts to authenticated;
create view public.my_open_tasks with (security_invoker = true) as
  select t.id, t.title, t.status, t.due_date, p.name as project
  from public.tasks t join public.projects p on p.id = t.project_id
  where t.assignee = (select auth.uid()) and t.status <> 'done';
grant select on public.my_open_tasks to authenticated;
""",
    "0017_task_comments.sql": """
create table public.task_comments (
  id bigint generated always as identity primary key,
  task_id bigint not null references public.tasks on delete cascade,
  author uuid not null default auth.uid() references auth.users on delete cascade,
  body text not null check (char_length(body) <= 4000),
  created_at timestamptz not null default now()
);
alter table public.task_comments enable row level security;
grant select, insert, delete on public.task_comments to authenticated;
create policy "Members can read comments" on public.task_comments
  for select to authenticated
  using (exists (select 1 from public.tasks t join public.projects p on p.id = t.project_id
                 where t.id = task_comments.task_id and public.is_team_member(p.team_id)));
create policy "Members can comment" on public.task_comments
  for insert to authenticated
  with check (author = (select auth.uid()) and exists (
    select 1 from public.tasks t join public.projects p on p.id = t.project_id
    where t.id = task_id and public.is_team_member(p.team_id)));
create policy "Authors can delete their comments" on public.task_comments
  for delete to authenticated using (author = (select auth.uid()));
""",
    "0018_comment_counts.sql": """
alter table public.tasks add column comment_count integer not null default 0;
create function public.bump_comment_count()
returns trigger
language plpgsql
security definer
set search_path = ''
as $$
begin
  if tg_op = 'INSERT' then
    update public.tasks set comment_count = comment_count + 1 where id = new.task_id;
  else
    update public.tasks set comment_count = comment_count - 1 where id = old.task_id;
  end if;
  return null;
end;
$$;
create trigger task_comments_count after insert or delete on public.task_comments
  for each row execute function public.bump_comment_count();
""",
    "0019_search.sql": """
create function public.search_tasks(query text, max_rows integer default 50)
returns setof public.tasks
language sql
stable
set search_path = ''
as $$
  select * from public.tasks
  where title ilike '%' || search_tasks.query || '%'
  order by updated_at desc
  limit search_tasks.max_rows;
$$;
revoke execute on function public.search_tasks(text, integer) from anon;
comment on function public.search_tasks(text, integer) is 'Searches the tasks the caller may see (security invoker: RLS applies).';
""",
    "0020_avatars_bucket.sql": """
insert into storage.buckets (id, name, public)
  values ('avatars', 'avatars', true);
""",
    "0021_avatar_policies.sql": """
create policy "Avatar images are publicly accessible." on storage.objects
  for select using (bucket_id = 'avatars');
create policy "Users can upload their own avatar." on storage.objects
  for insert to authenticated
  with check (bucket_id = 'avatars' and (storage.foldername(name))[1] = (select auth.uid())::text);
create policy "Users can update their own avatar." on storage.objects
  for update to authenticated
  using (bucket_id = 'avatars' and owner = (select auth.uid()))
  with check (bucket_id = 'avatars');
create policy "Users can delete their own avatar." on storage.objects
  for delete to authenticated using (bucket_id = 'avatars' and owner = (select auth.uid()));
""",
    "0022_attachments.sql": """
insert into storage.buckets (id, name, public)
  values ('task-attachments', 'task-attachments', false);
-- Paths start with the team id: <team>/<task>/<file>.
create policy "Members can read attachments" on storage.objects
  for select to authenticated
  using (bucket_id = 'task-attachments' and public.is_team_member(((storage.foldername(name))[1])::bigint));
create policy "Members can upload attachments" on storage.objects
  for insert to authenticated
  with check (bucket_id = 'task-attachments' and public.is_team_member(((storage.foldername(name))[1])::bigint));
""",
    "0023_team_details.sql": """
alter table public.teams add column description text;
alter table public.teams add constraint teams_slug_format check (slug ~ '^[a-z0-9][a-z0-9-]{1,48}$');
alter table public.projects add column description text, alter column name set default 'Untitled';
create policy "Owners can update their team" on public.teams
  for update to authenticated
  using (exists (select 1 from public.team_members m
                 where m.team_id = teams.id and m.user_id = (select auth.uid()) and m.role = 'owner'));
""",
    "0024_archived_projects.sql": """
create or replace view public.team_task_counts with (security_invoker = true) as
  select p.team_id, t.status, count(*) as tasks, count(*) filter (where t.priority = 'high') as high_priority
  from public.tasks t join public.projects p on p.id = t.project_id
  where not p.archived
  group by p.team_id, t.status;
drop policy "Members can update tasks" on public.tasks;
create policy "Members can update tasks" on public.tasks
  for update to authenticated
  using (exists (select 1 from public.projects p
                 where p.id = tasks.project_id and not p.archived and public.is_team_member(p.team_id)))
  with check (exists (select 1 from public.projects p
                      where p.id = tasks.project_id and not p.archived and public.is_team_member(p.team_id)));
""",
    "0025_api_hardening.sql": """
-- Trigger functions are not for /rest/v1/rpc.
revoke execute on function public.handle_new_user() from public, anon, authenticated;
revoke execute on function public.add_team_owner() from public, anon, authenticated;
revoke execute on function public.bump_comment_count() from public, anon, authenticated;
revoke truncate on public.profiles from anon, authenticated;
grant select (id, username, avatar_url) on public.profiles to anon;
""",
}


class PQ:
    """Just enough of libpq through ctypes to time statements on an open connection."""
    lib = ctypes.CDLL(ctypes.util.find_library("pq") or "libpq.so.5")
    lib.PQconnectdb.restype = ctypes.c_void_p
    lib.PQconnectdb.argtypes = [ctypes.c_char_p]
    lib.PQstatus.argtypes = [ctypes.c_void_p]
    lib.PQerrorMessage.restype = ctypes.c_char_p
    lib.PQerrorMessage.argtypes = [ctypes.c_void_p]
    lib.PQexec.restype = ctypes.c_void_p
    lib.PQexec.argtypes = [ctypes.c_void_p, ctypes.c_char_p]
    lib.PQresultStatus.argtypes = [ctypes.c_void_p]
    lib.PQresultErrorMessage.restype = ctypes.c_char_p
    lib.PQresultErrorMessage.argtypes = [ctypes.c_void_p]
    lib.PQclear.argtypes = [ctypes.c_void_p]
    lib.PQfinish.argtypes = [ctypes.c_void_p]

    def __init__(self, conninfo):
        self.conn = self.lib.PQconnectdb(conninfo.encode())
        if self.lib.PQstatus(self.conn) != 0:
            raise SystemExit("libpq: " + self.lib.PQerrorMessage(self.conn).decode())

    def timed(self, sql):
        """Runs `sql` and returns its wall time in ms (one round trip)."""
        start = time.perf_counter()
        res = self.lib.PQexec(self.conn, sql.encode())
        ms = (time.perf_counter() - start) * 1000
        status = self.lib.PQresultStatus(res)
        error = self.lib.PQresultErrorMessage(res).decode()
        self.lib.PQclear(res)
        if status not in (1, 2):  # PGRES_COMMAND_OK, PGRES_TUPLES_OK
            raise SystemExit(f"libpq: {sql}: {error}")
        return ms

    def close(self):
        self.lib.PQfinish(self.conn)


def url(db):
    # TLS off, as in the migrate bench: the shadow is reached with the same URL's options.
    return f"postgresql://postgres:steward-local@127.0.0.1:{PORT}/{db}?sslmode=disable"


def psql(dburl, *args):
    return subprocess.run(["psql", dburl, "-X", "-q", "-At", "-v", "ON_ERROR_STOP=1", *args], check=True, capture_output=True,
                          text=True, env={**os.environ, "PGOPTIONS": "-c client_min_messages=warning"}).stdout


def fresh(name):
    psql(ADMIN, "-c", f"drop database if exists {name} with (force)", "-c",
         f"create database {name} template steward_template_2026 owner postgres",
         # The platform lets postgres manage storage policies (supautils); the shim's stand-in reads this per-database setting.
         "-c", f"alter database {name} set supautils_stand_in.policy_grants = 'postgres:storage.objects'")


def steward(*args, expect=(0,)):
    """Runs steward; returns (ms, exit status, stdout)."""
    start = time.perf_counter()
    done = subprocess.run([STEWARD, *args], capture_output=True, text=True)
    ms = (time.perf_counter() - start) * 1000
    if done.returncode not in expect:
        raise SystemExit(f"steward {' '.join(args)} exited {done.returncode}\n{done.stdout}{done.stderr}")
    return ms, done.returncode, done.stdout


def load():
    with open("/proc/loadavg") as f:
        return " ".join(f.read().split()[:3])


def write_project(folder):
    for name, sql in PROJECT.items():
        with open(os.path.join(folder, name), "w") as f:
            f.write(sql.lstrip())


def shadows():
    return set(psql(ADMIN, "-c", "select datname from pg_database where datname like 'steward_shadow_%'").split())


def main():
    if not os.access(STEWARD, os.X_OK):
        raise SystemExit(f"no steward binary at {STEWARD} (set STEWARD_BINARY)")
    shadows_before = shadows()
    migrate_ms, verify_ms, shadow_ms, build_ms, create_ms, drop_ms = [], [], [], [], [], []
    with tempfile.TemporaryDirectory() as folder:
        write_project(folder)
        common = ["--database-url", url(DB), "--migrations", folder, "--log-level", "warning"]
        for r in range(RUNS):
            fresh(DB)
            migrate_ms.append(steward("migrate", *common)[0])
            ms, _, out = steward("verify", *common)
            verify_ms.append(ms)

            def shadow_verify():
                psql(url(DB), "-c", "update steward.schema_migrations set catalog_recorded = null; delete from steward.schema_record;")
                ms, _, out = steward("verify", *common)
                recorded = psql(url(DB), "-c", "select count(*) from steward.schema_migrations where catalog_recorded = 'shadow'").strip()
                if recorded != str(len(PROJECT)):
                    raise SystemExit(f"the shadow verify recorded {recorded} files, not {len(PROJECT)}:\n{out}")
                built = re.search(r"shadow database \((\d+) ms\)", out)
                if not built:
                    raise SystemExit("no shadow build in the verify output:\n" + out)
                shadow_ms.append(ms)
                build_ms.append(float(built.group(1)))
                return out

            def create_drop():
                # As Steward does for its shadow: role postgres (CREATEDB), connected to the project's database.
                conn = PQ(url(DB))
                name = f"bench_verify_create_{r}"
                create_ms.append(conn.timed(f"create database {name} template template0"))
                drop_ms.append(conn.timed(f"drop database if exists {name} with (force)"))
                conn.close()

            if r % 2 == 0:
                shadow_out = shadow_verify(); create_drop()
            else:
                create_drop(); shadow_out = shadow_verify()
        after = load()
        psql(ADMIN, "-c", f"drop database if exists {DB} with (force)")
    # Other work on the cluster (the test suite) may be building a shadow of its own right now: only one that stays counts.
    left = shadows() - shadows_before
    if left:
        time.sleep(5)
        left &= shadows()
    if left:
        raise SystemExit("shadow databases left behind: " + ", ".join(sorted(left)))

    def cells(xs):
        return f"{statistics.median(xs):.1f} | {min(xs):.1f} | {max(xs):.1f}"
    m = statistics.median
    create_drop_ms = [c + d for c, d in zip(create_ms, drop_ms)]
    a, b, c, d = m(migrate_ms), m(verify_ms), m(shadow_ms), m(create_drop_ms)
    bar = c / (a + d)
    print(f"## steward verify against steward migrate, {len(PROJECT)} files — {datetime.date.today()} — {platform.node()} "
          f"({os.cpu_count()} cores, {platform.machine()}), {RUNS} rounds\n")
    print("| case | median (ms) | min (ms) | max (ms) |")
    print("|---|---|---|---|")
    print(f"| (a) `steward migrate`, {len(PROJECT)} files, fresh database | {cells(migrate_ms)} |")
    print(f"| (b) `steward verify`, recorded state | {cells(verify_ms)} |")
    print(f"| (c) `steward verify`, no record: shadow build | {cells(shadow_ms)} |")
    print(f"| &nbsp;&nbsp;of which the shadow build, as verify reports it | {cells(build_ms)} |")
    print(f"| (d) `create database … template template0` | {cells(create_ms)} |")
    print(f"| &nbsp;&nbsp;`drop database … with (force)` | {cells(drop_ms)} |")
    print(f"| &nbsp;&nbsp;create + drop | {cells(create_drop_ms)} |")
    print()
    # The same ratios within each round too (both sides measured seconds apart), less moved by other load on the machine.
    def paired(f):
        xs = [f(*r) for r in zip(migrate_ms, verify_ms, shadow_ms, create_drop_ms)]
        return f"{statistics.median(xs):.2f} ({min(xs):.2f}–{max(xs):.2f})"
    print("| ratio | of the medians | a round's own, median (min–max) | target |")
    print("|---|---|---|---|")
    print(f"| verify / migrate (b / a) | {b / a:.2f} | {paired(lambda a, b, c, d: b / a)} | |")
    print(f"| shadow verify / migrate (c / a) | {c / a:.2f} | {paired(lambda a, b, c, d: c / a)} | |")
    print(f"| shadow verify / (migrate + create and drop database) (c / (a + d)) | {bar:.2f} | "
          f"{paired(lambda a, b, c, d: c / (a + d))} | ≤ 3: {'met' if bar <= 3 else 'missed'} |")
    print(f"\nEach round: a fresh database from steward_template_2026 (not timed), (a), (b), then (c) and (d) in alternating order; "
          f"wall times of the whole steward process (start, connect, work, exit), TLS off. (d) is two statements on an open "
          f"libpq connection as role postgres. Every verify exited 0; every shadow verify recorded all {len(PROJECT)} files "
          f"(`catalog_recorded = 'shadow'`) and left no shadow database behind. Load average after the run: {after}.")
    print("The last shadow verify's verdict: " + shadow_out.splitlines()[0])


if __name__ == "__main__":
    sys.exit(main())
