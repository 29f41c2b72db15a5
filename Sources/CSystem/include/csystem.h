#ifndef STEWARD_CSYSTEM_H
#define STEWARD_CSYSTEM_H
/* GNU-only socket calls that Glibc's Swift overlay does not show. */

/* accept4 with SOCK_NONBLOCK | SOCK_CLOEXEC semantics chosen by flags; NULL address. */
int steward_accept4(int fd, int flags);

/* pipe2(fds, flags). */
int steward_pipe2(int fds[2], int flags);

/* Hands back to the kernel the pages of the never-written segments of every loaded object (the program's and its
   libraries' code and read-only data, found by dl_iterate_phdr): MADV_PAGEOUT frees them where the kernel allows it,
   MADV_DONTNEED unmaps them otherwise; malloc_trim returns the heap's free pages. Pages still in use come back on
   their next touch. Returns how many segments were advised. */
int steward_release_cold_pages(void);

#endif
