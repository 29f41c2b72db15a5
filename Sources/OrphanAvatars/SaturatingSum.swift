extension Int64 {
    /// `self + other`, or `Int64.max` / `Int64.min` past them: sizes come from `storage.objects.metadata`, which the
    /// job does not write, so a corrupt value must not trap a sum.
    func saturatingSum(_ other: Int64) -> Int64 {
        let (sum, overflow) = addingReportingOverflow(other)
        return overflow ? (other > 0 ? .max : .min) : sum
    }
}
