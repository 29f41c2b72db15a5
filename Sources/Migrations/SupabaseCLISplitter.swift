import OutputText
/// Splits a migration file the way the Supabase CLI does before `db push` stores it in
/// `supabase_migrations.schema_migrations.statements`: a byte-level state machine (quotes, dollar quotes, line and
/// nested block comments, backslash escapes, parentheses and `BEGIN ATOMIC … END` bodies), each piece with its
/// trailing semicolons cut and then its white space trimmed, empty pieces dropped.
///
/// Written from the contract of supabase/cli `pkg/parser/state.go` and `pkg/parser/token.go` (`Split`,
/// `SplitAndTrim`); its published cases (`pkg/parser/state_test.go`, `pkg/parser/testdata/split_*.sql`) are
/// checked by `SupabaseCLISplitterTests`. It is not the server's split: the CLI's reading is what its table holds.
public enum SupabaseCLISplitter {
    /// The statements the CLI would store for `text`, in order.
    public static func splitAndTrim(_ text: String) -> [String] {
        split(text).compactMap { piece in
            var bytes = piece[...]
            while bytes.last == UInt8(ascii: ";") { bytes = bytes.dropLast() }
            let trimmed = String(decoding: bytes, as: UTF8.self).trimmingScalars(while: \.properties.isWhitespace)
            return trimmed.isEmpty ? nil : trimmed
        }
    }

    /// The raw pieces, each up to and including the `;` that ended it (the last one runs to the end of the text).
    static func split(_ text: String) -> [[UInt8]] {
        let bytes = Array(text.utf8)
        var pieces: [[UInt8]] = []
        var start = 0
        var state: State = .ready
        var index = 0
        while index < bytes.count {
            let width = scalarWidth(bytes[index])
            let end = min(index + width, bytes.count)
            let scalar = decode(bytes[index..<end])
            let data = bytes[start..<end]
            if let next = state.next(scalar, data) {
                state = next
            } else {
                pieces.append(Array(data))
                start = end
                state = .ready
            }
            index = end
        }
        if start < bytes.count { pieces.append(Array(bytes[start...])) }
        return pieces
    }

    /// The states of the CLI's reader; `next` returns nil where a statement ends.
    indirect enum State {
        case ready
        /// After one `-`.
        case dash
        /// After one `/`, or inside a block comment `depth` deep.
        case block(depth: Int)
        /// Inside `'…'` or `"…"`; `closing` after a delimiter that may be the first of a doubled pair.
        case quote(delimiter: Unicode.Scalar, closing: Bool)
        /// Inside a dollar-quoted string (or a line comment, whose closing delimiter is a line feed).
        case dollar(delimiter: [UInt8])
        /// After a `$` starting at byte `offset` of the statement: maybe a tag.
        case tag(offset: Int)
        /// After a backslash: the next character is skipped.
        case escape
        /// Inside parentheses or a `BEGIN ATOMIC` body, until `delimiter` is met at top level.
        case atomic(inner: State, delimiter: [UInt8])

        func next(_ r: Unicode.Scalar, _ data: ArraySlice<UInt8>) -> State? {
            switch self {
            case .ready:
                switch r {
                case "$": return .tag(offset: data.count - 1)
                case "'", "\"": return .quote(delimiter: r, closing: false)
                case "-": return .dash
                case "/": return .block(depth: 0)
                case "\\": return .escape
                case ";": return nil
                case "(": return .atomic(inner: .ready, delimiter: Array(")".utf8))
                case "c", "C":
                    let word = Array("ATOMIC".utf8)
                    let offset = data.count - word.count
                    if offset > 0, equalFold(data.suffix(word.count), word), isSpace(data[data.startIndex + offset - 1]) {
                        return .atomic(inner: .ready, delimiter: Array("END".utf8))
                    }
                    return self
                default: return self
                }
            case .dash:
                if r == "-" { return .dollar(delimiter: [0x0A]) }
                return State.ready.next(r, data)
            case .block(let depth):
                let window = data.suffix(2)
                if window.elementsEqual("/*".utf8) { return .block(depth: depth + 1) }
                if depth == 0 { return State.ready.next(r, data) }
                if window.elementsEqual("*/".utf8) {
                    return depth - 1 == 0 ? .ready : .block(depth: depth - 1)
                }
                return self
            case .quote(let delimiter, let closing):
                if closing {
                    if r == delimiter { return .quote(delimiter: delimiter, closing: false) }
                    return State.ready.next(r, data)
                }
                return r == delimiter ? .quote(delimiter: delimiter, closing: true) : self
            case .dollar(let delimiter):
                return data.count >= delimiter.count && data.suffix(delimiter.count).elementsEqual(delimiter) ? .ready : self
            case .tag(let offset):
                if r == "$" { return .dollar(delimiter: Array(data.dropFirst(offset))) }
                if isLetter(r) || isDigit(r) || r == "_" { return self }
                return State.ready.next(r, data)
            case .escape:
                return .ready
            case .atomic(var inner, let delimiter):
                // A `;` the inner state would end on does not end the body: the inner state stays where it was.
                if let moved = inner.next(r, data) { inner = moved }
                if case .ready = inner, data.count >= delimiter.count, equalFold(data.suffix(delimiter.count), delimiter) {
                    return .ready
                }
                return .atomic(inner: inner, delimiter: delimiter)
            }
        }
    }

    private static func scalarWidth(_ lead: UInt8) -> Int {
        switch lead {
        case 0xF0...0xF7: 4
        case 0xE0...0xEF: 3
        case 0xC0...0xDF: 2
        default: 1
        }
    }

    private static func decode(_ bytes: ArraySlice<UInt8>) -> Unicode.Scalar {
        String(decoding: bytes, as: UTF8.self).unicodeScalars.first ?? "\u{FFFD}"
    }

    /// ASCII case-insensitive comparison (the CLI's `strings.EqualFold` over ASCII keywords).
    static func equalFold(_ a: ArraySlice<UInt8>, _ b: [UInt8]) -> Bool {
        a.count == b.count && zip(a, b).allSatisfy { lower($0) == lower($1) }
    }

    private static func lower(_ byte: UInt8) -> UInt8 { (0x41...0x5A).contains(byte) ? byte + 0x20 : byte }

    /// Go's `unicode.IsSpace` applied to one byte, as the CLI does before `ATOMIC`.
    private static func isSpace(_ byte: UInt8) -> Bool {
        [0x09, 0x0A, 0x0B, 0x0C, 0x0D, 0x20, 0x85, 0xA0].contains(byte)
    }

    private static func isLetter(_ r: Unicode.Scalar) -> Bool {
        switch r.properties.generalCategory {
        case .uppercaseLetter, .lowercaseLetter, .titlecaseLetter, .modifierLetter, .otherLetter: true
        default: false
        }
    }

    private static func isDigit(_ r: Unicode.Scalar) -> Bool { r.properties.generalCategory == .decimalNumber }
}
