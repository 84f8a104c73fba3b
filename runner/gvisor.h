/* gvisor: the gVisor backend (see gvisor.c); the entry points sandbox.c calls are in
 * backend.h. These extras let callers (the worker, the runner benchmark) manage the
 * pool of sandboxes started ahead of need. */
#pragma once
#include <stdbool.h>

#include "runner/sandbox.h"

/* Declares the runtime of runs like spec (its ro_paths, argv[0], warm_argv and
 * preload make the pool's key) so that its pool fills now rather than after its
 * first run. No-op without a pool. Only those fields of spec are read. */
void gvisor_pool_prepare(const struct run_spec *spec);
/* Waits until the pool of spec's runtime holds gvisor_pool started sandboxes, at
 * most timeout_ms. Returns true when it got there. */
bool gvisor_pool_wait(const struct run_spec *spec, long timeout_ms);
