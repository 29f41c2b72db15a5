/// What the rules need to know of a username made only of ASCII, read from its bytes in one pass.
struct ASCIIText {
    /// Bytes, which are characters here except that CR LF is one.
    let count: Int
    /// Holds CR, so CR LF may make two bytes one character.
    let hasCarriageReturn: Bool
    /// Not empty, and every byte one of `a-z`, `0-9`, `_` and `.` (the default pattern's characters).
    let onlyDefaultPatternBytes: Bool
    /// Starts or ends with `.`, or holds `..`.
    let hasDotEdgesOrDoubleDot: Bool
    /// Holds a control character (U+0000 to U+001F, U+007F), the only invisible characters in ASCII.
    let hasControl: Bool
    /// The first or the last byte is white space (tab, LF, VT, FF, CR, space).
    let whiteSpaceAtAnEdge: Bool

    /// Nil when `text` holds anything beyond ASCII.
    init?(_ text: String) {
        var count = 0, carriageReturn = false, patternBytes = true, doubleDot = false, control = false
        var previous: UInt8 = 0, first: UInt8 = 0
        for byte in text.utf8 {
            if byte >= 0x80 { return nil }
            if count == 0 { first = byte }
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "_"): break
            case UInt8(ascii: "."): if previous == UInt8(ascii: ".") && count > 0 { doubleDot = true }
            default:
                patternBytes = false
                if byte < 0x20 || byte == 0x7F { control = true }
                if byte == 0x0D { carriageReturn = true }
            }
            previous = byte
            count += 1
        }
        self.count = count
        hasCarriageReturn = carriageReturn
        onlyDefaultPatternBytes = patternBytes && count > 0
        hasDotEdgesOrDoubleDot = count > 0 && (first == UInt8(ascii: ".") || previous == UInt8(ascii: ".") || doubleDot)
        hasControl = control
        whiteSpaceAtAnEdge = count > 0 && (Self.isWhiteSpace(first) || Self.isWhiteSpace(previous))
    }

    static func isWhiteSpace(_ byte: UInt8) -> Bool { byte == 0x20 || (0x09...0x0D).contains(byte) }
}
