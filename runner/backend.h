/* backend: what sandbox.c shares with its backends (native.c, gvisor.c). Not for judge/. */
#pragma once
#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "runner/sandbox.h"

/* One workspace (see sandbox.h). Created by sandbox_open, freed by sandbox_close. */
struct sandbox {
	enum sandbox_backend backend;
	int slot;	      /* 0.. : tells concurrent sandboxes of this process apart */
	unsigned long serial; /* unique within this process, part of every name */
	uid_t host_uid;	      /* host uid (and gid) owning the box: options' box_uid + slot */
	gid_t host_gid;
	long box_bytes;		 /* size cap of the box tmpfs */
	char box_path[PATH_MAX]; /* host path of the box mount, e.g. /run/judge/box-<pid>-<n> */
	int box_fd;		 /* O_PATH|O_DIRECTORY fd of the box root; -1 when closed */
	unsigned long runs;	 /* sandbox_run calls so far (for unique run names) */
	/* Backend-private state. A backend that sets it also sets backend_close,
	 * which sandbox_close calls first (before unmounting the box). */
	void *backend_data;
	void (*backend_close)(struct sandbox *sb);
	/* The gVisor sandbox serving this workspace's programs (gvisor.c), kept
	 * apart from backend_data: trusted tools may run natively on the same box. */
	void *gvisor_session;
	/* Bumped whenever the box may change outside that gVisor sandbox (a host
	 * write, a native run): the sentry caches what it saw, so a session only
	 * serves runs while this stays as it was when the session began. */
	unsigned long box_changes;
};

/* sandbox_global_init's copy of its options (NULL before it was called). */
const struct sandbox_options *sandbox_options(void);

/* The backend entry points. sandbox_run has checked spec (every limit > 0) and
 * reset res. Each fills res and returns 0 when a
 * status was decided (internal_error included, with res->message set). */
int native_run(struct sandbox *sb, const struct run_spec *spec, struct run_result *res);
int gvisor_run(struct sandbox *sb, const struct run_spec *spec, struct run_result *res);

/* Native backend set-up (native.c): checks namespaces, cgroups; returns 0 or -1 with err. */
int native_global_init(const struct sandbox_options *opts, char *err, size_t errlen);
void native_global_shutdown(void);
bool native_works(char *why, size_t whylen);

/* gVisor backend (gvisor.c, owned by the gvisor helper).
 * gvisor_global_init: starts pools etc.; 0 or -1 with err (then gvisor is unavailable,
 * which is not fatal for the native backend). gvisor_sweep: removes runsc state and
 * cgroups left by crashed workers (called by sandbox_global_init before anything
 * else). gvisor_works: true when runsc can run here, else false with the reason. */
int gvisor_global_init(const struct sandbox_options *opts, char *err, size_t errlen);
void gvisor_global_shutdown(void);
bool gvisor_works(char *why, size_t whylen);
void gvisor_sweep(void);
/* Ends the gVisor sandbox of sb's session, if any (sandbox_close calls it). */
void gvisor_close(struct sandbox *sb);

/* Helpers of sandbox.c for the backends. */
/* Formats the internal_error of res: status, and message (printf-style). Returns 0. */
int sandbox_fail(struct run_result *res, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* Microseconds of CLOCK_MONOTONIC. */
long long sandbox_now_us(void);
