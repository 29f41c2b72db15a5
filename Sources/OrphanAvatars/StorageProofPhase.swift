import FoundationEssentials
import Jobs
import OutputText
import Postgres
import Storage

/// The Storage proof (`StorageProof`), run once a run, before anything else touches Storage: a canary uploaded
/// through the API must show up, with the id the API answered, in this database's `storage.objects`, and go from it
/// when the API deletes it. A real run that cannot prove its API deletes nothing; a dry run proves too, since it is
/// what a user tries first and the one run that should say "this URL is another project's" before a real one does.
/// The canary is the only object a dry run ever deletes.
///
/// The candidates scan never sees a canary: it is uploaded and deleted here, before the scan starts; and a canary
/// left by a killed run is deleted here too (`removeStaleCanaries`), after the proof and still before the scan. Even
/// were one missed, it would be younger than the grace (at least an hour; the proof takes milliseconds) only for
/// the run that made it, so never eligible in that run.
extension OrphanAvatarsJob {
    /// What the proof found, for the summary.
    struct StorageProven: Sendable {
        var milliseconds: Int64
        var staleRemoved: Int64
        /// The proof's requests (retries included), stale canaries' deletes too.
        var requests: Int64

        /// The run's summary, begun with the proof's counts.
        var summary: JobSummary {
            var summary = JobSummary()
            summary.set("storage_proof_ms", milliseconds)
            summary.set("stale_canaries_removed", staleRemoved)
            summary.set("storage_proof_requests", requests)
            return summary
        }
    }

    /// Proves `storage` serves this database (throws a `Refusal` naming the URL when it does not), then removes the
    /// canaries killed runs left.
    func proveStorage(_ context: JobContext, storage: StorageSession) async throws -> StorageProven {
        let url = try await storage.run { $0.displayURL }
        let bucket = settings.buckets[0]
        let started = ContinuousClock.now
        // This database's idea of the bucket: enough to choose a content type it takes. When the API serves another
        // database, that one's bucket decides the upload, and the row is missing here whatever it answers.
        let allowed = try await context.database.run { c in
            try c.query("select allowed_mime_types from storage.buckets where id = \(bucket)").rows.first.map { try $0.decode([String]?.self, at: 0) } ?? nil
        }
        let canary = StorageProof(bucket: bucket, allowedMimeTypes: allowed)
        let place = "\(bucket)/\(canary.name)"
        do {
            try await proveCanary(canary, place: place, url: url, context, storage: storage)
        } catch {
            // Best effort: a canary must not outlive a failed proof (the next proof would remove it anyway).
            _ = try? await storage.run { try $0.deleteObject(bucket: bucket, path: canary.name) }
            throw error
        }
        let elapsed = ContinuousClock.now - started
        let milliseconds = elapsed.components.seconds * 1000 + elapsed.components.attoseconds / 1_000_000_000_000_000
        context.logger.info("the Storage API proved it serves this database: its canary appeared in storage.objects and went with it",
                            [("url", url), ("canary", place), ("ms", String(milliseconds))])
        let stale = try await removeStaleCanaries(context, storage: storage, except: canary.name, url: url)
        return StorageProven(milliseconds: milliseconds, staleRemoved: stale, requests: Int64(try await storage.run { $0.requestCount }))
    }

    /// Upload, see the row; delete, see it gone. Every way this can fail is a `Refusal`.
    private func proveCanary(_ canary: StorageProof, place: String, url: String, _ context: JobContext, storage: StorageSession) async throws {
        let answer: StorageClient.UploadAnswer
        do {
            answer = try await storage.run { try $0.upload(bucket: canary.bucket, path: canary.name, data: canary.bytes, contentType: canary.contentType) }
        } catch let error as StorageError where error.kind == .duplicate {
            // A retried upload whose first attempt landed: the name is this run's own (a fresh UUID), so the row is
            // this upload's; its id is unknown, the name proves as much.
            answer = StorageClient.UploadAnswer(id: nil, key: nil)
        } catch let error as StorageError {
            throw Refusal(description: StorageProof.refusal(url: url, "could not prove it serves this database: the upload of its canary \(place) failed (\(error))"))
        }
        let row = try await canaryRow(context, canary)
        guard let row else {
            throw Refusal(description: StorageProof.refusal(url: url, "does not serve this database: its canary upload \(place) was answered "
                + "(Id \(answer.id ?? "not given")) but did not appear in this database's storage.objects"))
        }
        if let id = answer.id, id.lowercased() != row.lowercased() {
            throw Refusal(description: StorageProof.refusal(url: url, "does not serve this database: its canary upload \(place) was answered with Id \(id), "
                + "but this database's storage.objects row of that name has id \(row)"))
        }
        do {
            try await storage.run { try $0.deleteObject(bucket: canary.bucket, path: canary.name) }
        } catch let error as StorageError {
            throw Refusal(description: StorageProof.refusal(url: url, "could not prove it serves this database: the delete of its canary \(place) failed (\(error))"))
        }
        if try await canaryRow(context, canary) != nil {
            throw Refusal(description: StorageProof.refusal(url: url, "does not serve this database: it answered the delete of its canary \(place), "
                + "but the row is still in this database's storage.objects"))
        }
    }

    /// The id of the canary's row in this database's `storage.objects`, nil when there is none.
    private func canaryRow(_ context: JobContext, _ canary: StorageProof) async throws -> String? {
        let (bucket, name) = (canary.bucket, canary.name)
        return try await context.database.run { c in
            try c.query("select id::text from storage.objects where bucket_id = \(bucket) and name = \(name) collate \"C\"").rows.first
                .map { try $0.decode(String.self, at: 0) }
        }
    }

    /// Deletes, through the API just proven, the canaries of the cleaned buckets that a killed run left in this
    /// database (any but this run's: the job's lock keeps every other run of it on this database out of its proof).
    /// A failure stops the run, so a left canary is never counted among the objects the scan reports.
    private func removeStaleCanaries(_ context: JobContext, storage: StorageSession, except current: String, url: String) async throws -> Int64 {
        let buckets = settings.buckets
        let stale = try await context.database.run { c in
            try c.query("""
                select bucket_id, name from storage.objects
                where bucket_id = any(\(buckets)::text[]) and starts_with(name, \(StorageProof.canaryPrefix)) and name <> \(current)
                order by bucket_id, name collate "C" limit 1000
                """).decode((String, String).self)
        }
        var removed: Int64 = 0
        for (bucket, name) in stale where StorageProof.isCanary(name) {
            do {
                try await storage.run { try $0.deleteObject(bucket: bucket, path: name) }
                removed += 1
            } catch let error as StorageError where error.kind == .notFound {
                continue
            } catch let error as StorageError {
                throw Refusal(description: "could not delete the canary \(bucket)/\(name) a killed run left, through the Storage API at \(url) (\(error)); "
                    + "no object was deleted")
            }
        }
        if removed > 0 {
            context.logger.warning("deleted canaries a killed run left", [("url", url), ("count", String(removed)),
                                                                         ("examples", stale.prefix(3).map { "\($0.0)/\($0.1)" }.joined(separator: " | "))])
        }
        return removed
    }
}
