/* nzygote: the native backend's zygotes, one per tenant key, runtime and env
 * (docs/warm-start.md, "Native"). */
#pragma once

#include <stdbool.h>

#include "runner/native/init/ns_proto.h"
#include "runner/sandbox.h"

struct nz;

/* Whether spec's run may be forked from a zygote: warm_start on, a key, the
 * language's zygote, `<its interpreter> <script> [args]`, and none of the
 * native-only extras (its own network namespace, a box subfolder). */
bool nz_eligible(const char *key, const struct run_spec *spec);

/* The ready zygote of key for spec's zygote argv and env, with a use counted
 * (give it back with nz_put), or NULL: none ready yet. When there is none, one
 * is started (off this run: the run starts fresh, never waits for it). A
 * zygote is replaced after NZ_FORKS forks by a successor of the same key, argv
 * and env started NZ_AHEAD forks before. Never blocks on a zygote's start. */
struct nz *nz_get(const char *key, const struct run_spec *spec);

/* Asks z to fork p's program into the namespaces of the waiting init (pidfd),
 * with fds stdin, stdout, stderr and the report pipe (fds[0..3]) and the
 * cgroup join fds (cg_fds[0..ncg-1]: v1 tasks, v2 cgroup.procs). The zygote
 * (outside the namespaces) reports the program's end on the report pipe as
 * ns_init would and then kills init. Returns the program's host pid (> 0), 0
 * when z declined the job, or -errno (z is then retired). */
int nz_fork(struct nz *z, const struct nsinit_plan *p, const int fds[4], int pidfd,
	    const int *cg_fds, int ncg);

/* Gives back a use of nz_get. */
void nz_put(struct nz *z);

/* Ends every zygote (at the backend's shutdown). */
void nz_shutdown(void);
