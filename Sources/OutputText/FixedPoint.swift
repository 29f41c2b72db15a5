/// Numbers printed with a fixed count of decimals (`1.50`), as durations and rates appear in logs and output.
extension String {
    /// `value` rounded to `digits` decimals (0–9), half away from zero; `nan`, `inf`, `-inf` for those values.
    public init(fixed value: Double, digits: Int) {
        let digits = Swift.max(0, Swift.min(9, digits))
        guard value.isFinite else {
            self = value.isNaN ? "nan" : (value < 0 ? "-inf" : "inf")
            return
        }
        var scale: Double = 1
        for _ in 0..<digits { scale *= 10 }
        let scaled = (value.magnitude * scale).rounded(.toNearestOrAwayFromZero)
        guard scaled < 9e18 else {
            self = "\(value)"
            return
        }
        let units = UInt64(scaled)
        let divisor = UInt64(scale)
        let whole = units / divisor, fraction = units % divisor
        var text = (value < 0 && units > 0 ? "-" : "") + String(whole)
        if digits > 0 {
            let f = String(fraction)
            text += "." + String(repeating: "0", count: digits - f.count) + f
        }
        self = text
    }
}
