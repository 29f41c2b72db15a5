import Foundation
import Postgres
import Testing
import TestSupport

@Suite("Sign in with Apple: the client secret", .needsCluster)
struct AppleSecretTests {
    @Test("generate: an ES256 JWT that Python's cryptography verifies, with Apple's header and claims, written mode 600")
    func generateVerifies() throws {
        try AppleWorld.with { w in
            let file = try w.secret(days: 180)
            var info = stat()
            stat(file, &info)
            #expect(info.st_mode & 0o777 == 0o600)
            let token = try String(contentsOfFile: file, encoding: .utf8)
            let verdict = try shell("""
                python3 - '\(token)' '\(w.keyFile)' <<'PY'
                import base64, json, sys
                from cryptography.hazmat.primitives import hashes, serialization
                from cryptography.hazmat.primitives.asymmetric import ec
                from cryptography.hazmat.primitives.asymmetric.utils import encode_dss_signature
                token, keyfile = sys.argv[1], sys.argv[2]
                h, c, s = token.split(".")
                pad = lambda x: x + "=" * (-len(x) % 4)
                sig = base64.urlsafe_b64decode(pad(s))
                assert len(sig) == 64, len(sig)
                key = serialization.load_pem_private_key(open(keyfile, "rb").read(), None).public_key()
                key.verify(encode_dss_signature(int.from_bytes(sig[:32], "big"), int.from_bytes(sig[32:], "big")),
                           f"{h}.{c}".encode(), ec.ECDSA(hashes.SHA256()))
                print(json.dumps({"header": json.loads(base64.urlsafe_b64decode(pad(h))), "claims": json.loads(base64.urlsafe_b64decode(pad(c)))}))
                PY
                """)
            let parsed = try JSONSerialization.jsonObject(with: Data(verdict.utf8)) as? [String: [String: Any]]
            #expect(parsed?["header"]?["alg"] as? String == "ES256")
            #expect(parsed?["header"]?["kid"] as? String == w.keyID)
            let claims = parsed?["claims"] ?? [:]
            #expect(claims["iss"] as? String == w.teamID)
            #expect(claims["sub"] as? String == w.services)
            #expect(claims["aud"] as? String == "https://appleid.apple.com")
            let iat = claims["iat"] as? Int ?? 0, exp = claims["exp"] as? Int ?? 0
            #expect(exp - iat == 180 * 86400)
            #expect(abs(Double(iat) - Date().timeIntervalSince1970) < 60)
            #expect(try w.db.connect().query("select count(*) from steward.apple_secrets where kid = $1", [w.keyID]).rows[0].decode(Int.self, at: 0) == 1)
        }
    }

    @Test("bad keys and IDs are clear errors, and the key never shows", arguments: [
        ("notakey", "not a PEM private key"),
        ("rsa", "not an elliptic-curve key"),
        ("p384", "not P-256"),
        ("team", "team_id must be 10 letters or digits"),
        ("days", "--days takes 1 to 182"),
    ])
    func badInput(kind: String, message: String) throws {
        try AppleWorld.with { w in
            var extra = ""
            var args = ["apple-secret", "generate", "--out", w.folder + "/x.jwt"]
            let key = w.folder + "/other.p8"
            switch kind {
            case "notakey": try "hello".write(toFile: key, atomically: true, encoding: .utf8); chmod(key, 0o600); extra = "private_key_file = \(key)"
            case "rsa": try shell("openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out \(key) 2>/dev/null && chmod 600 \(key)"); extra = "private_key_file = \(key)"
            case "p384": try shell("openssl ecparam -name secp384r1 -genkey -noout | openssl pkcs8 -topk8 -nocrypt -out \(key) && chmod 600 \(key)"); extra = "private_key_file = \(key)"
            case "team": extra = "team_id = ABC123"
            default: args += ["--days", "400"]
            }
            let result = try w.steward(args, config: try w.config(extra))
            #expect(result.exitCode == 78 || result.exitCode == 64, "\(result.output)")
            #expect(result.stderr.contains(message), "\(result.stderr)")
            #expect(!result.output.contains("PRIVATE KEY"))
        }
    }

    @Test("status: days left and claims; a claim that does not match the config is named; exit 2 when close to expiry")
    func status() throws {
        try AppleWorld.with { w in
            let fresh = try w.secret(days: 180)
            let ok = try w.steward(["apple-secret", "status"], config: try w.config("secret_file = \(fresh)"))
            #expect(ok.exitCode == 0, "\(ok.output)")
            #expect(ok.stdout.contains("179 day(s) left") || ok.stdout.contains("180 day(s) left"))
            #expect(ok.stdout.contains("claims: iss \(w.teamID), sub \(w.services), kid \(w.keyID)"))
            let token = try String(contentsOfFile: fresh, encoding: .utf8)
            #expect(!ok.output.contains(token))
            let soon = try w.secret(days: 5)
            let close = try w.steward(["apple-secret", "status"], config: try w.config("secret_file = \(soon)\nservices_id = com.other.web"))
            #expect(close.exitCode == 2)
            #expect(close.stdout.contains("MISMATCH: sub is \(w.services), [apple] services_id is com.other.web"))
        }
    }

    @Test("reminders: one per threshold crossed, across runs and restarts; every run once expired; native-only needs none")
    func reminders() throws {
        try AppleWorld.with { w in
            let tenDays = try w.secret(days: 10)
            let config = try w.config("secret_file = \(tenDays)")
            let first = try w.steward(["job", "run", "apple-secret", "--json"], config: config)
            #expect(first.exitCode == 0, "\(first.output)")
            #expect(first.stdout.contains("\"reminders_raised\":1"))
            #expect(first.stderr.contains("expires in 9 day(s)") || first.stderr.contains("expires in 10 day(s)"))
            let again = try w.steward(["job", "run", "apple-secret", "--json"], config: config)
            #expect(again.stdout.contains("\"reminders_raised\":0"))
            #expect(try w.alerts().filter { $0.0 == "apple-secret-expiry" }.count == 2)   // 30 and 14, raised as one message
            let status = try StewardProcess.run(["status", "--database-url", w.db.url])
            #expect(status.stdout.contains("alerts (last 30 days):") && status.stdout.contains("WARNING Sign in with Apple: the client secret expires in"))

            try w.db.connectAsAdmin().execute("delete from steward.alerts")
            let expiredFile = w.folder + "/expired.jwt"
            // A token whose exp has passed (claims only matter here; status reads them).
            let header = Data(#"{"alg":"ES256","kid":"KEY1234567"}"#.utf8).base64EncodedString()
            let claims = Data(#"{"iss":"ABCDE12345","sub":"com.example.app.web","iat":1700000000,"exp":1710000000}"#.utf8).base64EncodedString()
            try "\(header).\(claims).c2ln".replacing("=", with: "").write(toFile: expiredFile, atomically: true, encoding: .utf8)
            chmod(expiredFile, 0o600)
            let expiredConfig = try w.config("secret_file = \(expiredFile)")
            for _ in 0..<2 {
                let run = try w.steward(["job", "run", "apple-secret"], config: expiredConfig)
                #expect(run.stderr.contains("critical") && run.stderr.contains("EXPIRED"))
            }
            #expect(try w.alerts().filter { $0.0 == "apple-secret-expired" }.count == 2)

            let native = try StewardProcess.run(["job", "run", "apple-secret", "--database-url", w.db.url, "--config", {
                let path = w.folder + "/native.ini"
                try? "[apple]\nnative_bundle_ids = com.example.app\n".write(toFile: path, atomically: true, encoding: .utf8)
                return path
            }(), "--json"])
            #expect(native.exitCode == 0)
            #expect(native.stdout.contains("not needed"))
        }
    }

    @Test("Management API: a hand-changed secret is unknown; generate --push rotates and verifies; auto_rotate does it before expiry; 429 is retried")
    func managementAPI() throws {
        try AppleWorld.with { w in
            let emulator = try EmulatorProcess(script: "management-emulator.py", arguments: [
                "--ref", "abcdefghijklmnopqrst", "--token", "sbp_testtoken0123456789", "--secret-hash", "deadbeef"])
            let port = emulator.port
            let tokenFile = w.folder + "/token"
            try "sbp_testtoken0123456789".write(toFile: tokenFile, atomically: true, encoding: .utf8)
            chmod(tokenFile, 0o600)
            #expect(eventually(10) { (try? shell("curl -sf http://127.0.0.1:\(port)/__emulator/stats")) != nil })
            let api = "project_ref = abcdefghijklmnopqrst\naccess_token_file = \(tokenFile)\nmanagement_url = http://127.0.0.1:\(port)"
            let unknown = try w.steward(["apple-secret", "status"], config: try w.config(api))
            #expect(unknown.exitCode == 2)
            #expect(unknown.stdout.contains("someone changed it by hand"))
            try shell("curl -sf -X POST -d '{\"rate_limit_next\": 1}' http://127.0.0.1:\(port)/__emulator/faults")
            let pushed = try w.steward(["apple-secret", "generate", "--push", "--days", "5"], config: try w.config(api))
            #expect(pushed.exitCode == 0, "\(pushed.output)")
            #expect(pushed.stdout.contains("verified its hash"))
            let known = try w.steward(["apple-secret", "status"], config: try w.config(api))
            #expect(known.stdout.contains("source: management-api"))
            #expect(known.stdout.contains("4 day(s) left") || known.stdout.contains("5 day(s) left"))

            let rotate = try w.steward(["job", "run", "apple-secret", "--json"], config: try w.config(api + "\nauto_rotate = true\nrotate_days_before = 30"))
            #expect(rotate.exitCode == 0, "\(rotate.output)")
            #expect(rotate.stdout.contains("\"rotated\":1"))
            let after = try w.steward(["apple-secret", "status"], config: try w.config(api))
            #expect(after.stdout.contains("179 day(s) left") || after.stdout.contains("180 day(s) left"))
            #expect(try w.alerts().contains { $0.0 == "apple-secret-rotated" })
            for output in [pushed.output, rotate.output, after.output] { #expect(!output.contains("sbp_testtoken0123456789")) }
        }
    }

    @Test("a webhook that fails is retried, recorded, and never blocks the job")
    func webhook() throws {
        try AppleWorld.with { w in
            let soon = try w.secret(days: 3)
            let run = try w.steward(["job", "run", "apple-secret", "--json"], config: try w.config("secret_file = \(soon)\nwebhook_url = http://127.0.0.1:1/hook"))
            #expect(run.exitCode == 0, "\(run.output)")
            #expect(run.stdout.contains("\"webhook_failures\":1"))
            #expect(try w.db.connect().query("select webhook_status from steward.alerts where message not like '(covered%'").rows[0].decode(String?.self, at: 0) == "failed")
        }
    }
}
