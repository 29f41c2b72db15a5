/// One kind of local time a zone keeps: its offset from UTC and whether it is daylight saving time.
public struct LocalTimeType: Sendable, Equatable {
    /// Seconds east of UTC.
    public let utcOffset: Int
    public let isDaylightSaving: Bool

    public init(utcOffset: Int, isDaylightSaving: Bool) {
        self.utcOffset = utcOffset
        self.isDaylightSaving = isDaylightSaving
    }
}
