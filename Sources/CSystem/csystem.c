#define _GNU_SOURCE
#include <errno.h>
#include <malloc.h>
#include <poll.h>
#include <stdio.h>
#include <sys/mman.h>
#include <stddef.h>
#include <sys/socket.h>
#include <unistd.h>
#include <fcntl.h>
#include "csystem.h"

int steward_accept4(int fd, int flags) { return accept4(fd, NULL, NULL, flags); }

int steward_pipe2(int fds[2], int flags) { return pipe2(fds, flags); }

#ifndef MADV_PAGEOUT
#define MADV_PAGEOUT 21
#endif

int steward_release_cold_pages(void) {
  FILE *maps = fopen("/proc/self/maps", "re");
  if (!maps) return -1;
  char line[4096];
  int advised = 0, failed = 0;
  while (fgets(line, sizeof line, maps)) {
    unsigned long start, end, offset, inode;
    char perms[8], device[32];
    if (sscanf(line, "%lx-%lx %7s %lx %31s %lu", &start, &end, perms, &offset, device, &inode) != 6) continue;
    /* File-backed and not writable: clean pages the kernel can read in again; never the stack, heap or data. */
    if (inode == 0 || perms[1] == 'w' || perms[3] != 'p') continue;
    if (madvise((void *)start, end - start, MADV_PAGEOUT) == 0) advised++;
    else if (errno == EINVAL) failed++;
  }
  fclose(maps);
  malloc_trim(0);
  if (advised == 0 && failed > 0) { errno = EINVAL; return -1; }
  return advised;
}
