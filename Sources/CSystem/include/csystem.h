#ifndef STEWARD_CSYSTEM_H
#define STEWARD_CSYSTEM_H
/* GNU-only socket calls that Glibc's Swift overlay does not show. */

/* accept4 with SOCK_NONBLOCK | SOCK_CLOEXEC semantics chosen by flags; NULL address. */
int steward_accept4(int fd, int flags);

/* pipe2(fds, flags). */
int steward_pipe2(int fds[2], int flags);

/* Hands back to the kernel the pages of this process's read-only file mappings (its code, its libraries' code
   and read-only data) with madvise(MADV_PAGEOUT), and the malloc heap's free pages with malloc_trim. Pages still
   in use are read in again on their next touch. Returns how many mappings were advised, or -1 (errno set) when
   /proc/self/maps cannot be read or the kernel lacks MADV_PAGEOUT (before Linux 5.4). */
int steward_release_cold_pages(void);

#endif
