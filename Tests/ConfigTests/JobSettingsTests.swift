import Config
import Foundation
import Jobs
import OrphanAvatars
import PruneHistory
import Testing
import UsernameCheck
import steward

@Suite("job settings: each job's keys read once into typed values, a bad one named by file, line and key")
struct JobSettingsTests {
    static func configure(_ text: String) throws(ConfigError) -> [JobCatalog.Configured] {
        let config = try StewardConfig.parse(path: "jobs.ini", bytes: Array(text.utf8), schema: .steward)
        return try JobCatalog.steward.configure(config.jobSections, config: config)
    }

    @Test("a bad value of a job's own key names the file, its line and the key, with the reason", arguments: [
        ("orphan-avatars", "batch_size", "0", "from 1 to 1000"),
        ("orphan-avatars", "batch_size", "many", "not a whole number"),
        ("orphan-avatars", "grace", "30m", "the grace period must be at least 1h"),
        ("orphan-avatars", "grace", "soon", "\"soon\" is not a duration such as 24h"),
        ("orphan-avatars", "max_fraction", "2", "from 0 to 1"),
        ("orphan-avatars", "max_per_run", "0", "at least 1"),
        ("orphan-avatars", "fence", "maybe", "on or off"),
        ("orphan-avatars", "fence_wait", "90s", "from 1s to 60s"),
        ("orphan-avatars", "fence_request_timeout", "never", "\"never\" is not auto or a duration such as 4s"),
        ("orphan-avatars", "references", "public.profiles", "each reference must be schema.table.column"),
        ("orphan-avatars", "buckets", ",", "name at least one bucket"),
        ("username-check", "min_length", "0", "at least 1"),
        ("username-check", "pattern", "[", "not a valid regular expression"),
        ("username-check", "max_mixed_script", "any", "not a restriction level"),
        ("username-check", "rules", "length,nope", "unknown rule nope"),
        ("username-check", "page_size", "50", "from 100 to 100000"),
        ("prune-history", "retention", "12h", "keep at least 1d of history"),
    ])
    func badValueNamed(job: String, key: String, value: String, reason: String) throws {
        do {
            _ = try Self.configure("[job.\(job)]\nenabled = false\n\(key) = \(value)\n")
            Issue.record("[job.\(job)] \(key) = \(value) was accepted")
        } catch {
            #expect(error.file == "jobs.ini")
            #expect(error.line == 3)
            #expect(error.key == "[job.\(job)] \(key)")
            #expect(error.message.contains(reason), "\(error)")
        }
    }

    @Test("a control character quoted from any value reaches the message escaped, whichever key quotes it", arguments: [
        ("prune-history", "retention", true), ("orphan-avatars", "grace", true), ("orphan-avatars", "fence_request_timeout", true),
        ("username-check", "rules", true), ("prune-history", "timeout", false), ("prune-history", "retries", true),
        ("orphan-avatars", "batch_size", false),
    ])
    func controlCharactersEscaped(job: String, key: String, quotesValue: Bool) throws {
        do {
            _ = try Self.configure("[job.\(job)]\nenabled = false\n\(key) = 1\t.5h\\x\n")
            Issue.record("[job.\(job)] \(key) with a tab was accepted")
        } catch {
            #expect(!error.description.unicodeScalars.contains { $0.value < 0x20 }, "\(error)")
            #expect(error.line == 3 && error.key == "[job.\(job)] \(key)", "\(error)")
            #expect(error.message.contains(#"1\t.5h\\x"#) == quotesValue, "\(error)")
        }
    }

    @Test("values are read into the job's settings once: numbers, durations, lists and choices as written")
    func typedValues() throws {
        let config = try StewardConfig.parse(path: "jobs.ini", bytes: Array("""
            [job.orphan-avatars]
            buckets = avatars, covers,
            grace = 2h
            batch_size = 250
            max_fraction = 0.25
            fence = off
            fence_wait = 5s
            references = public.profiles.avatar_url, public.teams.logo
            [job.username-check]
            page_size = 100
            rules = length, reserved
            [job.prune-history]
            retention = 30d

            """.utf8), schema: .steward)
        let settings = try JobSettings(job: OrphanAvatarsJob.self, section: config.jobSections.first { $0.name == "orphan-avatars" })
        let avatars = try OrphanAvatarsJob.settings(settings.options, config: config)
        #expect(avatars.buckets == ["avatars", "covers"])
        if ProcessInfo.processInfo.environment["STEWARD_TEST_ORPHAN_GRACE_SECONDS"] == nil { #expect(avatars.graceSeconds == 7200) }
        #expect(avatars.batchSize == 250)
        #expect(avatars.maxFraction == 0.25)
        #expect(avatars.maxPerRun == 10000)
        #expect(avatars.fence == false)
        #expect(avatars.fenceWait == 5)
        #expect(avatars.fenceRequestTimeout == nil)
        #expect(avatars.referenceColumns?.map(\.description) == ["public.profiles.avatar_url", "public.teams.logo"])
        let usernames = try UsernameCheckJob.settings(
            JobSettings(job: UsernameCheckJob.self, section: config.jobSections.first { $0.name == "username-check" }).options, config: config)
        #expect(usernames.pageSize == 100)
        #expect(usernames.policy.rules == [.length, .reserved])
        #expect(usernames.policy.minLength == 3)
        let prune = try PruneHistoryJob.settings(
            JobSettings(job: PruneHistoryJob.self, section: config.jobSections.first { $0.name == "prune-history" }).options, config: config)
        #expect(prune.retentionSeconds == 30 * 86400)
    }
}
