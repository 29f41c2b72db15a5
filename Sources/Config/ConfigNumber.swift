/// Numbers read from files, the environment and flags: plain decimals only (no `nan`, `inf`, exponents or hex),
/// checked against a range before anything converts them, so no value can trap or overflow a consumer.
public enum ConfigNumber {
    /// The longest wait any key or flag takes: one year (DispatchTime, Task.sleep, poll and libcurl all hold it).
    public static let maximumSeconds: Double = 366 * 86400

    /// `text` as seconds (`30`, `0.5`) within `range`; nil for anything else.
    public static func seconds(_ text: String, in range: ClosedRange<Double>) -> Double? {
        guard isPlainDecimal(text), text.utf8.count <= 20, let value = Double(text), value.isFinite, range.contains(value) else { return nil }
        return value
    }

    /// `text` as a whole number within `range`; nil for anything else (a leading `+` or `-` only for negative ranges).
    public static func integer(_ text: String, in range: ClosedRange<Int>) -> Int? {
        let digits = text.hasPrefix("-") ? text.dropFirst() : Substring(text)
        guard !digits.isEmpty, digits.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }), digits.utf8.count <= 18,
              let value = Int(text), range.contains(value) else { return nil }
        return value
    }

    /// Digits with at most one `.` between digits: `10`, `0.25`.
    static func isPlainDecimal(_ text: String) -> Bool {
        let parts = text.utf8.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        guard parts.count == 1 || parts.count == 2 else { return false }
        return parts.allSatisfy { !$0.isEmpty && $0.allSatisfy { $0 >= 0x30 && $0 <= 0x39 } }
    }

    /// A Postgres timeout (`0`, `250ms`, `10s`, `5min`, `1h`, `1d`) in milliseconds, if Postgres can hold it
    /// (at most 2147483647 ms, about 24 days); nil otherwise.
    public static func postgresMilliseconds(_ text: String) -> Int? {
        let digits = text.prefix { $0.isASCII && $0.isNumber }
        guard !digits.isEmpty, digits.count <= 12, let number = Int(digits) else { return nil }
        let unit: Int
        switch text.dropFirst(digits.count) {
        case "": unit = 1
        case "ms": unit = 1
        case "s": unit = 1000
        case "min": unit = 60_000
        case "h": unit = 3_600_000
        case "d": unit = 86_400_000
        default: return nil
        }
        let (ms, overflow) = number.multipliedReportingOverflow(by: unit)
        guard !overflow, ms <= Int(Int32.max) else { return nil }
        return ms
    }
}

extension ConfigNumber {
    /// `0` and `1` for whole numbers, else the number as Swift prints it (the manual's and messages' form).
    public static func plain(_ number: Double) -> String {
        number == number.rounded() && abs(number) < 1e15 ? String(Int64(number)) : String(number)
    }
}
