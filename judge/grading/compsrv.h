/* compsrv: warm compile servers, a long-lived trusted compiler per (language,
 * slot) that compiles one source after another without starting again.
 *
 * A language names its server with compile_server in languages/<name>.ini. The
 * server is started lazily, at the first compile of its language in a slot,
 * as a live sandboxed process (sandbox_start) in the compile's tool backend,
 * under the language's compile limits (memory, processes), env and read-only
 * folders, with a private empty box of its own and a uid of its own range
 * (COMPSRV_SLOT0..): it never sees a submission's box, and no submission's
 * program shares its uid or its network namespace. The source goes in as bytes
 * and the compiler's output, exit status and files come back as bytes, which
 * the caller's side writes into that compile's box; so one compile cannot read
 * another's files, and the server runs compiler code only, never the program.
 *
 * Wire, on the server's stdin and stdout (languages/drivers/csharp/csharp_compiler.cs):
 *   server, once ready:  READY <version>\n
 *   request:             COMPILE <name> <bytes>\n<source>
 *   reply:               DONE <exit> <text_bytes> <nfiles>\n<text>
 *                        then nfiles times FILE <name> <bytes>\n<bytes>
 *                        or COLD <reason>\n: this source needs the cold path
 *                        (it would make the compiler read a file)
 *
 * Any failure of the server (it dies, hangs past the compile's wall limit,
 * breaks the wire, uses more than the compile's CPU limit, gives more output
 * or bigger files than the compile may) makes compsrv_compile return -1 after
 * killing it: the caller compiles cold, as without a server, and the next
 * compile starts a new one. A server is recycled after COMPSRV_MAX_COMPILES.
 */
#pragma once
#include <stdbool.h>
#include <stddef.h>

#include "common/strbuf.h"
#include "runner/sandbox.h"

struct lang;

/* Servers take slot numbers COMPSRV_SLOT0 + (caller's slot % COMPSRV_SLOTS):
 * above the callers' and the session pool's ranges (judge/service/slots.h,
 * runner/session/prestart.c), so their uid is no program's. */
#define COMPSRV_SLOT0 65500
#define COMPSRV_SLOTS 36
/* Compiles one server does before it is replaced by a new one. */
#define COMPSRV_MAX_COMPILES 500

/* One compile through a server. */
struct compsrv_job {
	const struct lang *lang;      /* has compile_server_argv */
	enum sandbox_backend backend; /* where the compile runs (the tool backend) */
	int slot;		      /* the caller's slot: one server per (lang, slot) */
	struct run_limits limits;     /* the compile's */
	const char *source;
	size_t source_len;
	struct sandbox *box; /* the compile's workspace: the files go there */
};

/* Turns the servers on in this process (a worker, `judge eval`: processes that
 * compile many times; a one-shot command compiles once and keeps the cold
 * path). Call after sandbox_global_init; servers stop at
 * sandbox_global_shutdown. Idempotent. */
void compsrv_enable(void);
/* True once compsrv_enable was called. */
bool compsrv_enabled(void);

/* Compiles job->source through the server of (lang, slot), starting it if need
 * be. Returns 0 with rr filled as a run of the compiler would be (status
 * RUN_OK, exit_code, the compiler's output in rr->out, cpu_ms, wall_ms,
 * memory_kb) and, when it compiled, its files written into job->box; or -1 with
 * the reason in err, the server killed: compile cold instead. rr must be
 * initialised (run_result_init). Threads may call it at once for different
 * slots. */
int compsrv_compile(const struct compsrv_job *job, struct run_result *rr, char *err, size_t errlen);

/* Stops every server (sandbox_global_shutdown does it for an enabled process). */
void compsrv_shutdown(void);
