/* worker: `judge worker`, the process that claims submissions and grades them in sandboxes.
 *
 * worker_slots threads ("slots") each claim a submission (queue_claim), grade
 * it (grade_request with the slot number) and finish it (queue_finish). One
 * more thread LISTENs on judge_new to wake idle slots (with a slow timer as a
 * fallback), extends the leases of running claims every lease_s / 3 and runs
 * the reaper every reap_interval_s. Connections that break (PostgreSQL
 * restarts) are re-opened; a finish that cannot be stored is retried until it
 * is, or until the claim is known to be lost (then another worker runs it).
 *
 * SIGTERM / SIGINT drain: no new claims; running submissions may finish and
 * sessions end for drain_s seconds (a second signal ends that at once); the
 * claims still running then are handed back (queue_release), every sandbox is
 * removed at once (sandbox_global_abort) and the process exits 0. A clean
 * drain shuts the sandboxes down in order. Either way nothing of the worker's
 * stays on the host (docs/operations.md, "Stopping").
 */
#pragma once

struct judge_config;

struct worker_opts {
	const char *url;     /* libpq connection string */
	const char *sandbox; /* backend name (gvisor, native, auto); NULL = cfg->sandbox */
	long slots;	     /* concurrent slots; 0 = cfg->worker_slots, or the cores */
};

/* worker_run() after an unclean drain: see there. */
#define WORKER_RC_ABANDONED 100

/* Runs a worker until SIGTERM or SIGINT (blocks those signals in the calling
 * thread, so call it from the main thread before starting others). Call it
 * once per process. Returns the process exit code: 0 after a clean drain, 1
 * when it cannot start; or WORKER_RC_ABANDONED when submissions still grading
 * after drain_s (or at a second signal) were handed back and every sandbox
 * removed under them (sandbox_global_abort): their threads still run, so the
 * caller must end the process at once with _exit(0) (after stopping what it
 * owns). */
int worker_run(const struct judge_config *cfg, const struct worker_opts *opts);
