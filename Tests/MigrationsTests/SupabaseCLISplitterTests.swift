import Foundation
import Migrations
import Testing

/// The Supabase CLI's published splitter cases (supabase/cli `pkg/parser/state_test.go`: each case is a list of
/// pieces that `Split` must return for their concatenation; `pkg/parser/testdata/split_05.sql`, `split_07.sql`),
/// checked after the CLI's `SplitAndTrim` (trailing `;` cut, then white space trimmed, empty pieces dropped).
@Suite("the Supabase CLI's statement splitting")
struct SupabaseCLISplitterTests {
    /// `SplitAndTrim` of the pieces `Split` returns.
    static func trimmed(_ pieces: [String]) -> [String] {
        pieces.compactMap { piece in
            var text = Substring(piece)
            while text.hasSuffix(";") { text = text.dropLast() }
            let t = text.trimmingCharacters(in: .whitespacesAndNewlines)
            return t.isEmpty ? nil : t
        }
    }

    static let publishedCases: [(String, [String])] = [
        ("line comment after separator", ["END;", "-- comment"]),
        ("line comment before separator", ["SELECT --; 1"]),
        ("line comment not started", ["- ;", "END"]),
        ("line comment between lines", ["-- /* \n;", " */ END"]),
        ("block comment contains separator", ["SELECT /* ; */ 1;"]),
        ("nested block comment", ["SELECT /*; /*;*/ ;*/ 1"]),
        ("block comment not started", ["/ * ;", " */ END"]),
        ("separator without spaces", [";", "END;", ";"]),
        ("separator between spaces", ["BEGIN   ;", "  END"]),
        ("backslash escaped separator", ["\\;;", "\\;"]),
        ("named dollar tag", ["$tag$ any ; string$tag$"]),
        ("anonymous dollar tag", ["$$\"Dane's horse\"$$"]),
        ("dollar not started", ["SELECT \"$\";", " $$"]),
        ("single quote escapes separator", ["SELECT ';' 1"]),
        ("doubled single quote", ["SELECT ';'';' 1"]),
        ("literal backslash in a string", ["SELECT '\\';", " 1'"]),
        ("double quote escapes separator", ["CREATE POLICY \"cats;dogs\" on cats_dogs;", " END"]),
        ("single quote inside double quotes", ["CREATE POLICY \"cat's and dog's\" on cats_dogs;", " END"]),
        ("doubled double quote", ["CREATE POLICY \"pet\"\"name\" on pets;", " END"]),
        ("parentheses", ["CREATE RULE notify_me AS ON UPDATE TO mytable DO (NOTIFY mytable; SELECT \"1\");", "SELECT 1"]),
        ("parentheses ignore literals", ["CREATE RULE notify_me AS ON UPDATE TO mytable DO (-- )\nSELECT ')';\n-- )\n)\n"]),
        ("begin atomic inline body", ["CREATE FUNCTION add(a integer, b integer) RETURNS integer\nLANGUAGE SQL\nIMMUTABLE STRICT PARALLEL SAFE\nRETURNS NULL ON NULL INPUT\nBEGIN ATOMIC\n\tSELECT 'add';\n\tSELECT a + b;\nEND;"]),
        ("begin atomic case insensitive", ["begin atomic; select 'end'; end"]),
        ("begin atomic ignores literals", ["CREATE FUNCTION test() BEGIN\nATOMIC-- END;\n-- END;\nEND\n;"]),
        ("atomic in a table name", ["create table public.atomic_test (id int);", "\nselect 1;"]),
        ("atomic in a function name", ["CREATE OR REPLACE FUNCTION public.my_function_atomic(p_id uuid)\nRETURNS void\nLANGUAGE plpgsql\nAS $$\nBEGIN\n  RAISE NOTICE 'hello';\nEND;\n$$;",
                                       "\nGRANT EXECUTE ON FUNCTION public.my_function_atomic(uuid) TO authenticated;"]),
        ("atomic in a column name", ["select is_atomic from flags;", "\nselect 1;"]),
        ("digit before atomic", ["select col1atomic from t;", "\nselect 1;"]),
        ("testdata split_05", ["\n\nCREATE INDEX \"placement_location_name_index_index\"\n    ON \"blocks\".placement (location_name, index);"]),
        ("testdata split_07", ["\n\nCREATE INDEX \"placement_index_index\"\n    ON \"blocks\".placement (index);"]),
    ]

    @Test("the CLI's own test cases split and trim as the CLI does", arguments: publishedCases.indices)
    func published(index: Int) {
        let (name, pieces) = Self.publishedCases[index]
        #expect(SupabaseCLISplitter.splitAndTrim(pieces.joined()) == Self.trimmed(pieces), "\(name)")
    }

}
