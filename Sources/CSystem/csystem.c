#define _GNU_SOURCE
#include <link.h>
#include <string.h>
#include <malloc.h>
#include <poll.h>
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

/* One loaded object's segments that are never written (code, read-only data; RELRO lives in the writable
   segment, so it is never touched): whole pages only, rounded inward. */
static int release_object(struct dl_phdr_info *info, size_t size, void *data) {
  (void)size;
  int *advised = data;
  unsigned long page = (unsigned long)sysconf(_SC_PAGESIZE);
  /* The kernel's vDSO is left alone, and so is any object with text relocations (its code was written once). */
  if (info->dlpi_name && strstr(info->dlpi_name, "vdso")) return 0;
  for (int i = 0; i < info->dlpi_phnum; i++) {
    const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
    if (ph->p_type != PT_DYNAMIC) continue;
    for (const ElfW(Dyn) *d = (const ElfW(Dyn) *)(info->dlpi_addr + ph->p_vaddr); d->d_tag != DT_NULL; d++) {
      if (d->d_tag == DT_TEXTREL || (d->d_tag == DT_FLAGS && (d->d_un.d_val & DF_TEXTREL))) return 0;
    }
  }
  for (int i = 0; i < info->dlpi_phnum; i++) {
    const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
    if (ph->p_type != PT_LOAD || (ph->p_flags & PF_W)) continue;
    unsigned long start = (info->dlpi_addr + ph->p_vaddr + page - 1) & ~(page - 1);
    unsigned long end = (info->dlpi_addr + ph->p_vaddr + ph->p_memsz) & ~(page - 1);
    if (end <= start) continue;
    /* PAGEOUT frees the pages where the kernel lets this process (it owns or may write the file); DONTNEED
       unmaps the rest, which were never written, so the next touch maps the file's page again. */
    (void)madvise((void *)start, end - start, MADV_PAGEOUT);
    if (madvise((void *)start, end - start, MADV_DONTNEED) == 0) (*advised)++;
  }
  return 0;
}

int steward_release_cold_pages(void) {
  int advised = 0;
  dl_iterate_phdr(release_object, &advised);
  malloc_trim(0);
  return advised;
}
