import Foundation

/// The quickstart SQL as users pasted it into the dashboard over the years (reference section 6).
public enum QuickstartVariant: String, CaseIterable, Sendable, CustomStringConvertible {
    /// Exactly the project's migration files, concatenated: what the current docs say.
    case current
    /// The current docs' narrowed avatar SELECT policy (no listing the bucket).
    case narrowedSelect
    /// Older docs: no grants, `auth.uid() = id` without the select wrapper, no search_path on the function.
    case older
    /// The dashboard template: `on delete cascade` on profiles.id, and no avatar UPDATE policy.
    case dashboardTemplate

    public var description: String { rawValue }

    /// The SQL a user would have pasted.
    public func sql() throws -> String {
        var text = try FileManager.default.contentsOfDirectory(atPath: TestEnvironment.migrationsDirectory)
            .filter { $0.hasSuffix(".sql") }.sorted()
            .map { try String(contentsOfFile: TestEnvironment.migrationsDirectory + "/" + $0, encoding: .utf8) }
            .joined(separator: "\n")
        switch self {
        case .current:
            break
        case .narrowedSelect:
            text = text.replacing("""
                create policy "Avatar images are publicly accessible." on storage.objects
                  for select using (bucket_id = 'avatars');
                """, with: """
                create policy "Avatar images are publicly accessible." on storage.objects
                  for select using (bucket_id = 'avatars' and storage.allow_any_operation(array['object.get_authenticated_info','object.get_authenticated']));
                """)
        case .older:
            text = text.replacing("GRANT SELECT ON public.profiles TO anon;\n", with: "")
                .replacing("GRANT SELECT, INSERT, UPDATE ON public.profiles TO authenticated;\n", with: "")
                .replacing("(select auth.uid()) = id", with: "auth.uid() = id")
                .replacing("set search_path = ''\n", with: "")
        case .dashboardTemplate:
            text = text.replacing("id uuid references auth.users not null primary key",
                                  with: "id uuid references auth.users on delete cascade not null primary key")
                .replacing("""
                create policy "Anyone can update their own avatar." on storage.objects
                  for update using ((select auth.uid()) = owner) with check (bucket_id = 'avatars');
                """, with: "")
        }
        return text
    }
}
