/* gvisor: the gVisor backend (see gvisor.c); the entry points sandbox.c calls are in
 * backend.h. These extras let callers (the worker, the runner benchmark) manage the
 * pool of sandboxes started ahead of need. */
#pragma once
#include <stdbool.h>

/* Declares the runtime of runs with these ro_paths (NULL-terminated, may be NULL)
 * and argv (argv[0] picks the warm-up) so that its pool fills now rather than after
 * its first run. No-op without a pool. */
void gvisor_pool_prepare(const char *const *ro_paths, const char *const *argv);
/* Waits until the pool of ro_paths holds gvisor_pool started sandboxes, at most
 * timeout_ms. Returns true when it got there. */
bool gvisor_pool_wait(const char *const *ro_paths, const char *const *argv, long timeout_ms);
