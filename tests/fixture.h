/* tests/fixture.h: set-up shared by the Criterion suites that run real
 * sandboxes. Header-only: each suite is its own binary. */
#ifndef TESTS_FIXTURE_H
#define TESTS_FIXTURE_H

#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "common/config.h"
#include "judge/grading/limits.h"
#include "runner/sandbox.h"

/* Starts the sandbox layer with cfg's options (as a worker does). */
static inline void fixture_sandbox_start(const struct judge_config *cfg)
{
	char err[512];
	struct sandbox_options opts;
	cr_assert_eq(limits_sandbox_options(cfg, &opts, err, sizeof err), 0, "%s", err);
	cr_assert_eq(sandbox_global_init(&opts, err, sizeof err), 0, "%s", err);
}

/* judge.ini's defaults on the native backend, the sandbox layer started. */
static inline void fixture_native_start(struct judge_config *cfg)
{
	config_defaults(cfg);
	free(cfg->sandbox);
	cfg->sandbox = strdup("native");
	fixture_sandbox_start(cfg);
}

#endif
