import Advisor
import Foundation
import Postgres
import SupabaseProject
import Testing
import TestSupport

/// `verify`'s security advice is the advisor's findings of a few checks, not a copy of them: the functions and tables
/// it names are exactly those `steward advise` reports under the same checks.
@Suite("verify's advice from the advisor's catalog", .needsCluster)
struct VerifyAdviceTests {
    @Test("the SECURITY DEFINER and TRUNCATE advice names what the advisor finds, and nothing else")
    func adviceIsTheAdvisorsFindings() throws {
        try withTestDatabase(.legacy) { db in
            try ProjectMigration.migrate(db)
            // A function the app might call, and a table whose row level security is off: TRUNCATE on it is not
            // advice (rls_disabled_in_public, an error, says more), in verify as in advise.
            try db.connect().execute("""
                create function public.do_thing() returns int language sql security definer set search_path = '' as 'select 1';
                create table public.notes (id int primary key); grant truncate on public.notes to anon;
                """)
            let advice = try SupabaseAdvisor().advisories(db.connect())
            let findings = try SecurityAdvisor().run(db.connect()).findings
            func subjects(_ marker: String) -> Set<String> {
                Set(advice.filter { $0.contains(marker) }.compactMap { $0.components(separatedBy: marker).first?.components(separatedBy: ": ").first })
            }
            func objects(_ names: String...) -> Set<String> { Set(findings.filter { names.contains($0.name) }.map(\.object)) }
            #expect(subjects(": SECURITY DEFINER and executable by") == ["public.do_thing()", "public.handle_new_user()"], "\(advice)")
            #expect(subjects(": SECURITY DEFINER and executable by")
                    == objects("anon_security_definer_function_executable", "authenticated_security_definer_function_executable"))
            #expect(subjects(" may TRUNCATE it") == ["public.profiles"], "\(advice)")
            #expect(subjects(" may TRUNCATE it") == objects("rls_table_truncate_granted"))
            #expect(advice.contains { $0.hasPrefix("storage.objects: an INSERT policy") } == !objects("storage_insert_allows_anon").isEmpty)
            let trigger = advice.first { $0.hasPrefix("public.handle_new_user()") } ?? ""
            #expect(trigger.contains("a trigger function") && trigger.contains("opt in: sql/optional/api-hardening"), "\(trigger)")
            let callable = advice.first { $0.hasPrefix("public.do_thing()") } ?? ""
            #expect(callable.contains("callable through /rest/v1/rpc") && callable.contains("revoke execute on function public.do_thing()"), "\(callable)")
        }
    }
}
