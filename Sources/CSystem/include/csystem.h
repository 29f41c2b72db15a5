#ifndef STEWARD_CSYSTEM_H
#define STEWARD_CSYSTEM_H
/* GNU-only socket calls that Glibc's Swift overlay does not show. */

/* accept4 with SOCK_NONBLOCK | SOCK_CLOEXEC semantics chosen by flags; NULL address. */
int steward_accept4(int fd, int flags);

/* pipe2(fds, flags). */
int steward_pipe2(int fds[2], int flags);

#endif
