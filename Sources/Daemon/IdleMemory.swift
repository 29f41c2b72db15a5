import CSystem

/// The memory an idle daemon can hand back: pages of its code and read-only data it has not touched lately, and
/// the heap's free pages. What is still used is read in again on its next touch (from the page cache, usually).
enum IdleMemory {
    /// Advises the kernel to take back the pages of the program's and its libraries' never-written segments and
    /// trims the heap; the number of segments advised.
    static func release() -> Int {
        Int(steward_release_cold_pages())
    }
}
