import Foundation
import Logging
import Postgres

/// Steward's own bookkeeping in the `steward` schema: created and upgraded by Steward, never by the app's files.
public struct HistoryStore {
    /// One row of `steward.schema_migrations`.
    public struct Entry: Sendable, Equatable {
        public let version: String
        public let name: String
        public let checksum: String
        public let normalizedChecksum: String
        public let appliedAt: String
        public let appliedBy: String
        public let durationMilliseconds: Double
        public let stewardVersion: String
        /// `apply` or `adopt`.
        public let method: String
    }

    /// Steward's own schema changes, in order; applied under the migration lock, each in its own transaction.
    static let bookkeeping: [String] = [
        """
        create schema if not exists steward;
        comment on schema steward is 'Steward bookkeeping: migration history and job runs. Managed by Steward itself.';
        create table steward.bookkeeping_version (
          version integer primary key,
          applied_at timestamptz not null default now()
        );
        create table steward.schema_migrations (
          version text primary key,
          name text not null,
          checksum text not null,
          normalized_checksum text not null,
          applied_at timestamptz not null default now(),
          applied_by text not null default current_user,
          duration_ms double precision not null,
          steward_version text not null,
          method text not null default 'apply' check (method in ('apply', 'adopt'))
        );
        """,
        """
        create table steward.job_runs (
          id bigserial primary key,
          job text not null,
          scheduled_for timestamptz,
          started_at timestamptz,
          finished_at timestamptz,
          status text not null check (status in ('running', 'succeeded', 'failed', 'skipped', 'missed')),
          trigger text not null check (trigger in ('schedule', 'catch-up', 'retry', 'manual')),
          attempt integer not null default 1,
          dry_run boolean not null default false,
          summary jsonb,
          error text,
          host text not null,
          pid integer not null
        );
        comment on table steward.job_runs is 'Every scheduled slot and manual run of a Steward job: run, skipped or missed.';
        create index job_runs_job_time on steward.job_runs (job, coalesce(scheduled_for, started_at) desc);
        -- One row per slot and attempt, whichever instance records it (no duplicates across failovers).
        create unique index job_runs_slot on steward.job_runs (job, scheduled_for, attempt) where scheduled_for is not null;
        create table steward.job_state (
          job text primary key,
          paused boolean not null default false,
          changed_by text,
          changed_at timestamptz not null default now()
        );
        create table steward.leader (
          id integer primary key default 1 check (id = 1),
          host text not null,
          pid integer not null,
          since timestamptz not null default now()
        );
        """,
        """
        create table steward.username_findings (
          profile_id uuid not null,
          username text not null,
          rule text not null,
          detail text not null,
          first_seen timestamptz not null default now(),
          last_seen timestamptz not null default now(),
          resolved_at timestamptz,
          primary key (profile_id, rule)
        );
        comment on table steward.username_findings is 'What the username-check job found; a finding that no longer holds is resolved, never deleted.';
        create index username_findings_open on steward.username_findings (rule) where resolved_at is null;
        """,
        """
        create table steward.deleted_objects (
          run_id bigint not null,
          bucket_id text not null,
          name text not null,
          size bigint,
          owner text,
          object_created_at timestamptz,
          deleted_at timestamptz,
          primary key (run_id, bucket_id, name)
        );
        comment on table steward.deleted_objects is 'Every object the orphan-avatars job deleted through the Storage API. deleted_at is null while a deletion is in flight; the next run settles such rows.';
        create index deleted_objects_pending on steward.deleted_objects (bucket_id, name) where deleted_at is null;
        """,
        """
        create table steward.apple_secrets (
          hmac text primary key,
          kid text not null,
          iat timestamptz not null,
          exp timestamptz not null,
          created_at timestamptz not null default now(),
          delivered text not null check (delivered in ('file', 'management-api', 'generated'))
        );
        comment on table steward.apple_secrets is 'Every Sign in with Apple client secret Steward generated or was given: never the secret, only hex(HMAC-SHA256(project ref, secret)).';
        create table steward.alerts (
          id bigserial primary key,
          kind text not null,
          key text not null unique,
          level text not null check (level in ('info', 'warning', 'critical')),
          message text not null,
          created_at timestamptz not null default now(),
          webhook_status text
        );
        comment on table steward.alerts is 'Reminders and alerts Steward raised; the unique key makes each one fire once.';
        """,
    ]

    let connection: Connection

    public init(connection: Connection) { self.connection = connection }

    /// True once the `steward` history table exists.
    public func exists() throws -> Bool {
        try connection.query("select to_regclass('steward.schema_migrations') is not null").scalar(Bool.self)
    }

    /// True when Steward's own schema exists at the version this Steward knows (nothing to create or upgrade).
    public func isCurrent() throws -> Bool {
        guard try connection.query("select to_regclass('steward.bookkeeping_version') is not null").scalar(Bool.self) else {
            return false
        }
        return try connection.query("select coalesce(max(version), 0) from steward.bookkeeping_version").scalar(Int.self)
            == Self.bookkeeping.count
    }

    /// Creates or upgrades the `steward` schema under the migration lock (for callers that do not hold it).
    public func prepareLocked(logger: Logger, waitSeconds: Double = 60) throws {
        let lock = MigrationLock(connection: connection, logger: logger)
        try lock.acquire(timeoutSeconds: waitSeconds)
        defer { try? lock.release() }
        try prepare()
    }

    /// Creates or upgrades the `steward` schema; call while holding the migration lock.
    public func prepare() throws {
        let current: Int
        if try connection.query("select to_regclass('steward.bookkeeping_version') is not null").scalar(Bool.self) {
            current = try connection.query("select coalesce(max(version), 0) from steward.bookkeeping_version").scalar(Int.self)
        } else {
            current = 0
        }
        guard current <= Self.bookkeeping.count else {
            throw PostgresError(kind: .invalidArgument,
                message: "the steward schema is at version \(current), newer than this Steward knows (\(Self.bookkeeping.count)); upgrade Steward")
        }
        for (index, script) in Self.bookkeeping.enumerated() where index + 1 > current {
            try connection.transaction { c in
                try c.execute(script)
                try c.query("insert into steward.bookkeeping_version (version) values ($1)", [index + 1])
            }
        }
    }

    /// Every applied migration, in version order; empty when the schema does not exist yet.
    public func entries() throws -> [Entry] {
        guard try exists() else { return [] }
        return try connection.query("""
            select version, name, checksum, normalized_checksum,
                   applied_at,
                   applied_by, duration_ms, steward_version, method
            from steward.schema_migrations
            """).rows.map { row in
            Entry(version: try row.decode(String.self, "version"), name: try row.decode(String.self, "name"),
                  checksum: try row.decode(String.self, "checksum"),
                  normalizedChecksum: try row.decode(String.self, "normalized_checksum"),
                  appliedAt: ISODate.string(try row.decode(Date.self, "applied_at")), appliedBy: try row.decode(String.self, "applied_by"),
                  durationMilliseconds: try row.decode(Double.self, "duration_ms"),
                  stewardVersion: try row.decode(String.self, "steward_version"), method: try row.decode(String.self, "method"))
        }.sorted { MigrationSource.versionOrder($0.version, $1.version) }
    }

    /// Records `file` as applied (inside the caller's transaction, so the row and the change commit together).
    public func record(_ file: MigrationFile, durationMilliseconds: Double, method: String, stewardVersion: String) throws {
        try connection.query("""
            insert into steward.schema_migrations (version, name, checksum, normalized_checksum, duration_ms, steward_version, method)
            values ($1, $2, $3, $4, $5, $6, $7)
            """, [file.version, file.name, file.checksum, Self.recordedNormalizedChecksum(file), durationMilliseconds, stewardVersion, method])
    }

    /// What `normalized_checksum` holds for `file`: `2:<sha256>` (the server's tokens); a bare SHA-256 is version 1.
    static func recordedNormalizedChecksum(_ file: MigrationFile) -> String {
        "\(MigrationFile.normalizedChecksumVersion):\(file.normalizedChecksum)"
    }
}
