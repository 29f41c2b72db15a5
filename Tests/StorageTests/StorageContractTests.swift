import Foundation
import HTTP
import Storage
import Testing
import TestSupport
import OutputText

/// The Storage emulator against Supabase's own Python client, and Steward's Storage client against the real server's
/// error model (transient conditions as HTTP 400 with statusCode "503" or "423" in the body).
@Suite("the Storage contract: storage3 against the emulator, Steward against the real error model", .needsCluster)
struct StorageContractTests {
    @Test("storage3 uploads (multipart and raw), duplicates, upserts, downloads, lists, removes and reads the bucket as the server answers",
          arguments: TestDatabase.GrantMode.allCases)
    func storage3(mode: TestDatabase.GrantMode) throws {
        try AvatarWorld.with(users: 1, mode: mode) { w in
            let secret = w.storage.jwtSecret
            let keys = try StorageEmulator.keys(secret: secret, sub: w.users[0])
            let thirdParty = try #require(try StorageEmulator.keys(secret: secret, sub: "auth0|steward-contract")["user"])
            let result = try StewardProcess.runProgram("/usr/bin/env", [
                "python3", TestEnvironment.root + "/Tests/Helpers/storage3-contract.py", "--url", w.storage.url,
                "--service-key", w.storage.serviceRoleKey, "--anon-key", try #require(keys["anon"]),
                "--user-key", try #require(keys["user"]), "--third-party-key", thirdParty,
            ], timeout: 120)
            #expect(result.exitCode == 0, "\(mode): \(result.output.suffix(4000))")
            let summary = (try? JSONSerialization.jsonObject(with: Data(result.stdout.utf8))) as? [String: Any] ?? [:]
            #expect((summary["checks"] as? Int ?? 0) >= 50, "\(result.stdout)")
            #expect(summary["failures"] as? Int == 0)
        }
    }

    /// A Storage client whose retries wait milliseconds, so every class of answer is tried quickly.
    static func quickClient(_ w: AvatarWorld) throws -> StorageClient {
        var retry = RetryPolicy()
        retry.baseDelaySeconds = 0.01
        retry.maxDelaySeconds = 0.05
        return try StorageClient(url: w.storage.url, key: w.storage.serviceRoleKey, retry: retry, logger: .silent)
    }

    static let transient: [[String: String]] = [
        ["http": "400", "statusCode": "503", "code": "DatabaseReadOnly", "error": "DatabaseReadOnly"],
        ["http": "400", "statusCode": "423", "code": "ResourceLocked", "error": "ResourceLocked"],
        ["http": "400", "statusCode": "503", "code": "LockTimeout", "error": "acquiring_lock_timeout"],
        ["http": "429", "statusCode": "429", "code": "SlowDown", "error": "too_many_requests"],
        ["http": "500", "statusCode": "500", "code": "InternalError", "error": "internal"],
        ["http": "502", "statusCode": "502", "code": "BadGateway", "error": "Bad Gateway"],
        ["http": "544", "statusCode": "544", "code": "DatabaseTimeout", "error": "DatabaseTimeout"],
    ]

    static let final: [([String: String], StorageError.Kind)] = [
        (["http": "400", "statusCode": "400", "code": "InvalidRequest", "error": "Bad Request"], .invalidRequest),
        (["http": "400", "statusCode": "404", "code": "NoSuchBucket", "error": "Bucket not found"], .notFound),
        (["http": "400", "statusCode": "403", "code": "AccessDenied", "error": "Unauthorized"], .denied),
        (["http": "400", "statusCode": "409", "code": "KeyAlreadyExists", "error": "Duplicate"], .duplicate),
        (["http": "400", "statusCode": "413", "code": "EntityTooLarge", "error": "Payload too large"], .tooLarge),
        (["http": "400", "statusCode": "415", "code": "InvalidMimeType", "error": "invalid_mime_type"], .invalidRequest),
        (["http": "401", "statusCode": "403", "code": "AccessDenied", "error": "Unauthorized"], .denied),
    ]

    /// `answer` with the emulator's numeric `http`.
    static func injected(_ answer: [String: String]) -> [String: Any] {
        var out: [String: Any] = answer
        out["http"] = Int(answer["http"] ?? "400") ?? 400
        return out
    }

    @Test("every transient answer (400 with statusCode 503 or 423, 429, 5xx) is tried again; every other 4xx is final at once")
    func classification() throws {
        try AvatarWorld.with(users: 1) { w in
            let client = try Self.quickClient(w)
            for answer in Self.transient {
                try w.storage.reset()
                try w.storage.faults(["answer_next": [Self.injected(answer), Self.injected(answer)]])
                let bucket = try client.bucket("avatars")
                #expect(bucket.id == "avatars", "\(answer)")
                #expect(try w.storage.stats()["requests"] as? Int == 3, "\(answer): two injected answers, then the real one")
            }
            for (answer, kind) in Self.final {
                try w.storage.reset()
                try w.storage.faults(["answer_next": [Self.injected(answer)]])
                let error = #expect(throws: StorageError.self, "\(answer)") { try client.bucket("avatars") }
                #expect(error?.kind == kind, "\(answer): \(String(describing: error))")
                #expect(error?.isRetryable == false)
                #expect(try w.storage.stats()["requests"] as? Int == 1, "\(answer): not tried again")
            }
            // The same classification without the emulator: the body decides, the HTTP status only when it is silent.
            let cases: [(Int, String, Bool)] = [(400, #"{"statusCode":"503"}"#, true), (400, #"{"statusCode":"423"}"#, true),
                                                (400, #"{"statusCode":"404"}"#, false), (400, "not json", false), (503, "", true),
                                                (429, "", true), (404, "", false), (400, #"{"statusCode":"500"}"#, true),
                                                (502, #"{"statusCode":"400"}"#, false), (400, #"{"statusCode":503}"#, true)]
            for (status, body, retryable) in cases {
                #expect(StorageError.isRetryable(HTTPResponse(status: status, headers: [], body: Array(body.utf8))) == retryable, "\(status) \(body)")
            }
        }
    }

    @Test("a failed DELETE may still be carried out only when it went out and no answer of Storage's own came back: a drop, a gateway's 5xx")
    func fateOfAFailedRequest() throws {
        try AvatarWorld.with(users: 1) { w in
            let client = try Self.quickClient(w)
            func failure(_ faults: [String: Any]) throws -> StorageError? {
                try w.storage.reset()
                try w.storage.faults(faults)
                return #expect(throws: StorageError.self, "\(faults)") {
                    try client.deleteObjects(bucket: "avatars", names: ["x.jpeg"], retrying: .once, timeoutSeconds: 2)
                }
            }
            let dropped = try failure(["drop_next": 1])
            #expect(dropped?.kind == .network && dropped?.requestSent == true && dropped?.mayStillBeCarriedOut == true, "\(String(describing: dropped))")
            let gateway = try failure(["gateway_next": 1, "gateway_status": 504, "gateway_late_ms": -1])
            #expect(gateway?.httpStatus == 504 && gateway?.statusCode == nil && gateway?.mayStillBeCarriedOut == true, "\(String(describing: gateway))")
            let own = try failure(["fail_next": 1])
            #expect(own?.httpStatus == 500 && own?.statusCode == "500" && own?.mayStillBeCarriedOut == false, "Storage's own 500 is its final word")
            let transient = try failure(["answer_next": [Self.injected(Self.transient[0])]])
            #expect(transient?.mayStillBeCarriedOut == false)
            let hung = try failure(["hang_next": 1, "hang_s": 5])
            #expect(hung?.kind == .network && hung?.mayStillBeCarriedOut == true, "a timeout after sending: \(String(describing: hung))")
            // Nothing listens on the port: the request never went out.
            let nobody = try StorageClient(url: "http://127.0.0.1:9", key: w.storage.serviceRoleKey, logger: .silent)
            let refused = #expect(throws: StorageError.self) { try nobody.deleteObjects(bucket: "avatars", names: ["x.jpeg"], retrying: .once, timeoutSeconds: 2) }
            #expect(refused?.kind == .network && refused?.requestSent == false && refused?.mayStillBeCarriedOut == false, "\(String(describing: refused))")
        }
    }

    @Test("orphan-avatars: the server's transient answers inside the fence are retried and the batch finishes; a plain 4xx is not retried",
          arguments: [true, false])
    func orphanJob(transient: Bool) throws {
        try AvatarWorld.with { w in
            let orphans = (0..<6).map { "t\($0).jpeg" }
            try w.seed(orphans: orphans, kept: 2)
            let answers = transient ? [Self.injected(Self.transient[0]), Self.injected(Self.transient[1])] : [Self.injected(Self.final[0].0)]
            try w.storage.faults(["answer_next": answers])
            let (result, summary) = try w.run([], config: "batch_size = 10\nmax_fraction = 1\n")
            let stats = try w.storage.stats()
            let deletes = (stats["by_route"] as? [String: Int])?["DELETE /object"] ?? 0
            if transient {
                #expect(result.exitCode == 0, "\(result.output)")
                #expect(try w.storage.objects() == ["keep0.jpeg", "keep1.jpeg"])
                #expect(summary["deleted"] == 6)
                #expect(result.stderr.contains("retrying"), "\(result.stderr)")
                #expect(stats["faults"] as? Int == 2)
            } else {
                #expect(result.exitCode != 0, "\(result.output)")
                #expect(result.output.contains("invalid request"), "\(result.output)")
                #expect(try w.storage.objects() == Set(orphans + ["keep0.jpeg", "keep1.jpeg"]), "nothing deleted")
                #expect(deletes == 0, "the refused request is not sent again: \(stats)")
            }
            FaultLedger.record("Storage transient answers (\(transient ? "400 with statusCode 503 and 423" : "plain 400")) inside the fence",
                               runs: 1, faults: stats["faults"] as? Int ?? 0, objectsChecked: 8,
                               losses: try w.losses(kept: ["keep0.jpeg", "keep1.jpeg"], orphans: transient ? orphans : []))
        }
    }

    @Test("a JSON request without Content-Type: application/json is refused as the server refuses it; Steward's requests carry it")
    func contentType() throws {
        try AvatarWorld.with(users: 1) { w in
            try w.storage.upload(["ct1.jpeg", "ct2.jpeg"])
            let body = Array(#"{"prefixes":["ct1.jpeg"]}"#.utf8)
            let auth = [("apikey", w.storage.serviceRoleKey), ("Authorization", "Bearer " + w.storage.serviceRoleKey)]
            for headers in [auth, auth + [("Content-Type", "text/plain")]] {
                let response = try HTTPClient().send(HTTPRequest(method: "DELETE", url: w.storage.url + "/storage/v1/object/avatars",
                                                                 headers: headers, body: body))
                let fields = (try? JSONSerialization.jsonObject(with: Data(response.body))) as? [String: Any] ?? [:]
                #expect(response.status == 400 && fields["statusCode"] as? String == "400" && fields["code"] as? String == "InvalidRequest",
                        "\(headers.count): \(response.text)")
            }
            #expect(try w.storage.objects().contains("ct1.jpeg"), "nothing deleted by the refused requests")
            let deleted = try w.storage.client().deleteObjects(bucket: "avatars", names: ["ct1.jpeg"])
            #expect(deleted.map(\.name) == ["ct1.jpeg"])
            try w.storage.age(2 * 86400)
            let (result, summary) = try w.run(["--force"])
            #expect(result.exitCode == 0, "\(result.output)")
            #expect(summary["deleted"] == 1, "the job's DELETE passes the check")
        }
    }
}
