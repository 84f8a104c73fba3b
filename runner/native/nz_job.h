/* nz_job: the head of a native zygote's job (runner/native/nzygote.c sends
 * it, runner/zygote/zcore.c reads it), then argv, env and the seccomp filter,
 * with the run's fds. */
#pragma once
#include <stdint.h>

#define NZ_MAGIC 0x5A4E4A31u

struct nz_job {
	uint32_t magic;
	uint32_t argc, envc, filter_len;
	int32_t last_cap;
	uint32_t pad;
	uint64_t rl[8]; /* FSIZE, NOFILE, STACK, CPU: cur, max each */
};
