/* serve: `judge serve`, the HTTP API process (runs no submitted code, needs no privileges). */
#pragma once

struct judge_config;

/* Runs the API server until SIGTERM or SIGINT, then drains and returns the
 * process exit code (0 after a clean stop, 1 when it cannot start).
 * Checks that auth = off is only used on a loopback listener, binds the
 * listener, and when started as root drops the whole process to serve_user
 * (so call it in its own process, never beside a worker), then checks the
 * database schema and serves. The database must be running (judge up starts
 * the embedded one; serve alone does not). */
int serve_main(struct judge_config *cfg);
