// LD_PRELOAD shim for the fsync sweep (test/bench/src/sweep): every fsync() and fdatasync() of the process first
// waits FSYNC_DELAY_US microseconds, as a disk of that latency would, then runs. With the files on a tmpfs (where a
// real sync costs next to nothing) the disk's latency becomes a knob. nanosleep() overshoots by the timer slack
// (about 50-100 µs here), so the sweep reports the latency it measured (its disk probe), not the one it asked for.
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdlib.h>
#include <time.h>

static long delay_us = -1;

static void wait_disk(void) {
  if (delay_us < 0) {
    const char *v = getenv("FSYNC_DELAY_US");
    delay_us = v ? atol(v) : 0;
  }
  if (delay_us > 0) {
    struct timespec t = {delay_us / 1000000, (delay_us % 1000000) * 1000};
    nanosleep(&t, 0);
  }
}

int fsync(int fd) {
  static int (*real)(int);
  if (!real) real = (int (*)(int))dlsym(RTLD_NEXT, "fsync");
  wait_disk();
  return real(fd);
}

int fdatasync(int fd) {
  static int (*real)(int);
  if (!real) real = (int (*)(int))dlsym(RTLD_NEXT, "fdatasync");
  wait_disk();
  return real(fd);
}
