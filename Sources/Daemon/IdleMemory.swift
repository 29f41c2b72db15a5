import CSystem

/// The memory an idle daemon can hand back: pages of its code and read-only data it has not touched lately, and
/// the heap's free pages. What is still used is read in again on its next touch (from the page cache, usually).
enum IdleMemory {
    /// Advises the kernel to take back this process's clean file pages and trims the heap; the number of mappings
    /// advised, or nil when the kernel cannot (no `/proc`, or before Linux 5.4).
    static func release() -> Int? {
        let advised = steward_release_cold_pages()
        return advised < 0 ? nil : Int(advised)
    }
}
