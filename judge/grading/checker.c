/* checker: builds and runs custom output validators (ICPC contract) in a sandbox of their own.
 *
 * How it works: checker_build opens a workspace (box) that only the validator
 * ever sees, writes its files and compiles it once. checker_run then, per test
 * case, writes testdata.in / testdata.ans into that box, feeds the submission's
 * output on stdin, and runs
 *     sh -c WRAPPER VALIDATOR /box/testdata.in /box/testdata.ans /box/feedback/ ARGS...
 * where WRAPPER makes /box/feedback empty and execs the validator, so every
 * test starts with an empty feedback folder without an extra sandbox run. Exit 42 accepts, 43
 * rejects; judgemessage.txt becomes the message.
 */
#include "judge/grading/checker.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/config.h"
#include "judge/grading/compile.h"
#include "judge/grading/lang.h"
#include "judge/grading/limits.h"
#include "common/log.h"
#include "judge/grading/problem.h"
#include "common/strbuf.h"
#include "common/utf8.h"
#include "common/xalloc.h"

#define EXIT_ACCEPT 42
#define EXIT_REJECT 43
/* Validator source files are small; a bigger one is a broken package. */
#define SOURCE_MAX ((size_t)16 << 20)
/* Test data files read into the validator's box. */
#define DATA_MAX	 ((size_t)1 << 30)
#define MESSAGE_READ_MAX 4096
#define MAX_ARGS	 256

struct checker {
	struct sandbox *sb;
	const struct lang *lang;
	struct run_limits limits;
	char *problem_id;
};

static const char wrapper[] = "mkdir -p /box/feedback && rm -rf /box/feedback/*; exec \"$@\"";
/* an interactive validator talks to a program that may be gone: a write then
 * fails with EPIPE (which it can handle) instead of killing it (SIG_IGN
 * survives exec) */
static const char wrapper_talk[] =
    "trap '' PIPE; mkdir -p /box/feedback && rm -rf /box/feedback/*; exec \"$@\"";
/* a later pass of a multi-pass test keeps the folder but not the last request */
static const char wrapper_keep[] =
    "mkdir -p /box/feedback && rm -f /box/feedback/nextpass.in; exec \"$@\"";
/* The input of a next pass (nextpass.in) the judge takes at most. */
#define NEXTPASS_MAX ((size_t)64 << 20)

/* Copies text into dst as one valid UTF-8 string, cut at a character boundary. */
static void set_message(char *dst, size_t dstlen, const char *text, size_t len)
{
	struct strbuf clean = STRBUF_INIT;
	utf8_sanitize(&clean, text, len);
	size_t n = clean.len < dstlen - 1 ? clean.len : dstlen - 1;
	while (n > 0 && n < clean.len && ((unsigned char)clean.buf[n] & 0xc0) == 0x80)
		n--;
	memcpy(dst, clean.buf, n);
	dst[n] = 0;
	/* a trailing newline says nothing */
	while (n > 0 && (dst[n - 1] == '\n' || dst[n - 1] == '\r'))
		dst[--n] = 0;
	strbuf_release(&clean);
}

static long file_size(const char *path)
{
	struct stat st;
	return path && stat(path, &st) == 0 ? (long)st.st_size : 0;
}

static int write_host_file(struct sandbox *sb, const char *name, const char *path, char *err,
			   size_t errlen)
{
	struct strbuf data = STRBUF_INIT;
	int rc = path ? strbuf_read_file(&data, path, DATA_MAX) : 0;
	if (rc < 0) {
		snprintf(err, errlen, "cannot read '%s': %s", path,
			 rc == -EFBIG ? "file too large" : strerror(-rc));
		strbuf_release(&data);
		return -1;
	}
	rc = sandbox_write_file(sb, name, data.buf, data.len, 0644);
	strbuf_release(&data);
	if (rc < 0) {
		snprintf(err, errlen, "cannot write %s into the validator's box: %s", name,
			 strerror(-rc));
		return -1;
	}
	return 0;
}

static int compile(struct checker *c, const struct problem_program *prog,
		   const struct judge_config *cfg, char *err, size_t errlen)
{
	const struct lang *l = c->lang;
	if (!l->compile_argv)
		return 0;
	/* every source of the language is compiled together; headers just sit there */
	const char *extra[MAX_ARGS + 1];
	int n = 0;
	for (int i = 0; i < prog->nfiles && n < MAX_ARGS; i++)
		if (strcmp(prog->files[i], prog->main_file) && compile_is_source(l, prog->files[i]))
			extra[n++] = prog->files[i];
	extra[n] = NULL;
	char **argv = compile_command(l, extra, NULL); /* not NULL: l has a compile command */
	struct run_spec spec = {
	    .argv = (const char *const *)argv,
	    .env = (const char *const *)(l->compile_env ? l->compile_env : l->env),
	    .ro_paths = (const char *const *)l->ro_paths,
	    .trusted_tool = true,
	};
	struct limits_policy pol;
	limits_policy_from_config(cfg, &pol);
	limits_compile(&pol, l, &spec.limits);
	struct run_result rr;
	run_result_init(&rr);
	int ret = -1;
	if (sandbox_run(c->sb, &spec, &rr) < 0 || rr.status == RUN_INTERNAL_ERROR) {
		snprintf(err, errlen, "output validator: compiler sandbox failed: %s",
			 rr.message[0] ? rr.message : "invalid run specification");
		goto out;
	}
	if (rr.status != RUN_OK || rr.exit_code != 0) {
		char text[400];
		struct strbuf all = STRBUF_INIT;
		strbuf_add(&all, rr.out.buf, rr.out.len);
		strbuf_add(&all, rr.err.buf, rr.err.len);
		set_message(text, sizeof text, all.buf, all.len);
		strbuf_release(&all);
		snprintf(err, errlen, "output validator of '%s' does not compile (%s): %s",
			 c->problem_id, run_status_name(rr.status), text);
		goto out;
	}
	ret = 0;
out:
	run_result_release(&rr);
	compile_argv_free(argv);
	return ret;
}

int checker_build(const struct problem *p, const struct lang_registry *langs,
		  const struct judge_config *cfg, enum sandbox_backend backend, int slot,
		  struct checker **out, char *err, size_t errlen)
{
	*out = NULL;
	const struct problem_program *prog = &p->validator;
	if (!p->custom_validator || !prog->main_file) {
		snprintf(err, errlen, "problem '%s' has no output validator program", p->id);
		return -1;
	}
	const struct lang *l = prog->lang ? lang_find(langs, prog->lang) : NULL;
	if (!l) {
		snprintf(err, errlen, "output validator of '%s': language %s is not available",
			 p->id, prog->lang_code ? prog->lang_code : "(unknown)");
		return -1;
	}
	struct checker *c = xcalloc(1, sizeof *c);
	c->lang = l;
	c->problem_id = xstrdup(p->id);
	/* the box holds the validator, its build, and one test's input, answer and
	 * the submission's output at a time */
	long big_in = 0, big_ans = 0;
	for (int i = 0; i < p->ntests; i++) {
		long a = file_size(p->tests[i].in_path), b = file_size(p->tests[i].ans_path);
		big_in = a > big_in ? a : big_in;
		big_ans = b > big_ans ? b : big_ans;
	}
	const struct problem_limits *pl = &p->limits;
	long box = cfg->tmp_size_mb * 1024L * 1024 + big_in + big_ans;
	int ret = -1;
	/* only trusted tools run in this box: it lives where they run (native under
	 * gVisor by default), so a live validator (interactive) starts there too */
	if (sandbox_open(sandbox_tool_backend(backend), slot, box, &c->sb, err, errlen) < 0)
		goto out;
	for (int i = 0; i < prog->nfiles; i++) {
		struct strbuf pb = STRBUF_INIT;
		strbuf_addf(&pb, "%s/%s", prog->dir, prog->files[i]);
		char *path = strbuf_detach(&pb, NULL);
		struct strbuf src = STRBUF_INIT;
		int rc = strbuf_read_file(&src, path, SOURCE_MAX);
		if (rc == 0) {
			const char *name = strcmp(prog->files[i], prog->main_file) ? prog->files[i]
										   : l->source_file;
			rc = sandbox_write_file(c->sb, name, src.buf, src.len, 0644);
		}
		strbuf_release(&src);
		if (rc < 0) {
			snprintf(err, errlen, "output validator file '%s': %s", path,
				 strerror(-rc));
			free(path);
			goto out;
		}
		free(path);
	}
	if (compile(c, prog, cfg, err, errlen) < 0)
		goto out;
	struct limits_policy pol;
	limits_policy_from_config(cfg, &pol);
	limits_validator(&pol, l, pl, &c->limits);
	ret = 0;
out:
	if (ret < 0) {
		checker_close(c);
		c = NULL;
	}
	*out = c;
	return ret;
}

int checker_run(struct checker *c, const char *in_path, const char *ans_path, const char *output,
		size_t output_len, const char *const *args, struct checker_verdict *v)
{
	struct checker_call call = {.in_path = in_path,
				    .ans_path = ans_path,
				    .output = output,
				    .output_len = output_len,
				    .args = args};
	return checker_run_call(c, &call, v);
}

/* A number alone in a file the validator wrote (score.txt): true with *out. */
static bool read_number(struct sandbox *sb, const char *name, double *out)
{
	struct strbuf sb_num = STRBUF_INIT;
	bool ok = false;
	if (sandbox_read_file(sb, name, &sb_num, 256) == 0) {
		char *end;
		double v = strtod(sb_num.buf, &end);
		while (*end == ' ' || *end == '\n' || *end == '\r' || *end == '\t')
			end++;
		ok = end != sb_num.buf && !*end && isfinite(v);
		if (ok)
			*out = v;
	}
	strbuf_release(&sb_num);
	return ok;
}

/* What an accepting or rejecting validator left in feedback/: its message, a
 * score, a next pass. Returns -1 (message in v) when nextpass.in is unreadable. */
static int read_feedback(struct checker *c, const struct checker_call *call,
			 struct checker_verdict *v)
{
	struct strbuf msg = STRBUF_INIT;
	int rc = sandbox_read_file(c->sb, "feedback/judgemessage.txt", &msg, MESSAGE_READ_MAX);
	if (rc == 0 || rc == -EFBIG) /* a long message is cut, not lost */
		set_message(v->message, sizeof v->message, msg.buf, msg.len);
	strbuf_release(&msg);
	if (v->outcome != CHECKER_ACCEPT)
		return 0;
	if (read_number(c->sb, "feedback/score.txt", &v->score))
		v->has_score = true;
	else if (read_number(c->sb, "feedback/score_multiplier.txt", &v->score))
		v->has_score = v->multiplier = true;
	if (!call->nextpass)
		return 0;
	strbuf_reset(call->nextpass);
	rc = sandbox_read_file(c->sb, "feedback/nextpass.in", call->nextpass, NEXTPASS_MAX);
	if (rc == -ENOENT)
		return 0;
	if (rc < 0) {
		snprintf(v->message, sizeof v->message, "cannot read nextpass.in: %s",
			 rc == -EFBIG ? "larger than 64 MiB" : strerror(-rc));
		v->outcome = CHECKER_FAIL;
		return -1;
	}
	v->nextpass = true;
	return 0;
}

/* The validator's argv (borrowing strings) into argv (room for max). Returns
 * 0, or -1 when the arguments do not fit. */
static int validator_argv(const struct checker *c, const struct checker_call *call, bool talk,
			  const char **argv, int max)
{
	const struct lang *l = c->lang;
	int n = 0, nrun = 0, nargs = 0;
	while (l->run_argv[nrun])
		nrun++;
	while (call->args && call->args[nargs])
		nargs++;
	if (nrun + nargs + 8 > max)
		return -1;
	argv[n++] = "/bin/sh";
	argv[n++] = "-c";
	argv[n++] = talk ? wrapper_talk : call->keep_feedback ? wrapper_keep : wrapper;
	argv[n++] = "validator"; /* $0 of the wrapper; "$@" is what follows */
	for (int i = 0; i < nrun; i++)
		argv[n++] = l->run_argv[i];
	argv[n++] = "/box/testdata.in";
	argv[n++] = "/box/testdata.ans";
	argv[n++] = "/box/feedback/";
	for (int i = 0; i < nargs; i++)
		argv[n++] = call->args[i];
	argv[n] = NULL;
	return 0;
}

/* Writes the test's input and answer into the validator's box. 0 or -1 with err. */
static int write_inputs(struct checker *c, const struct checker_call *call, char *err,
			size_t errlen)
{
	if (call->in_data) {
		int rc =
		    sandbox_write_file(c->sb, "testdata.in", call->in_data, call->in_len, 0644);
		if (rc < 0) {
			snprintf(err, errlen,
				 "cannot write testdata.in into the validator's box: %s",
				 strerror(-rc));
			return -1;
		}
	} else if (write_host_file(c->sb, "testdata.in", call->in_path, err, errlen) < 0) {
		return -1;
	}
	return write_host_file(c->sb, "testdata.ans", call->ans_path, err, errlen);
}

/* The verdict of a validator run rr (not a sandbox failure) into v. */
static void validator_verdict(struct checker *c, const struct checker_call *call,
			      const struct run_result *rr, struct checker_verdict *v)
{
	v->cpu_ms = rr->cpu_ms;
	v->wall_ms = rr->wall_ms;
	bool exited = rr->status == RUN_OK || (rr->status == RUN_RUNTIME_ERROR && !rr->signal);
	if (exited && (rr->exit_code == EXIT_ACCEPT || rr->exit_code == EXIT_REJECT)) {
		v->outcome = rr->exit_code == EXIT_ACCEPT ? CHECKER_ACCEPT : CHECKER_REJECT;
		read_feedback(c, call, v);
		return;
	}
	/* the package's fault: say what happened, with the validator's own words */
	struct strbuf why = STRBUF_INIT;
	if (rr->status == RUN_TIMEOUT)
		strbuf_addf(&why, "output validator timed out after %ld ms", rr->cpu_ms);
	else if (rr->status == RUN_MEMORY_LIMIT)
		strbuf_addstr(&why, "output validator exceeded its memory limit");
	else if (rr->status == RUN_OUTPUT_LIMIT)
		strbuf_addstr(&why, "output validator wrote too much output");
	else if (rr->signal)
		strbuf_addf(&why, "output validator was killed by signal %d", rr->signal);
	else
		strbuf_addf(&why, "output validator exited with code %d (expected 42 or 43)",
			    rr->exit_code);
	if (rr->err.len) {
		strbuf_addstr(&why, ": ");
		strbuf_add(&why, rr->err.buf, rr->err.len < 300 ? rr->err.len : 300);
	}
	set_message(v->message, sizeof v->message, why.buf, why.len);
	strbuf_release(&why);
	if (rr->status == RUN_TIMEOUT || rr->status == RUN_MEMORY_LIMIT ||
	    rr->status == RUN_OUTPUT_LIMIT) {
		v->outcome = CHECKER_LIMIT;
		log_info("checker: problem %s: %s", c->problem_id, v->message);
		return;
	}
	log_warn("checker: problem %s: %s", c->problem_id, v->message);
}

/* The validator's run spec for call into spec, its argv into argv (room for
 * max). 0, or -1 with the reason in err. */
static int validator_spec(struct checker *c, const struct checker_call *call, bool talk,
			  const char **argv, int max, struct run_spec *spec, char *err,
			  size_t errlen)
{
	if (validator_argv(c, call, talk, argv, max) < 0) {
		snprintf(err, errlen, "too many output validator arguments");
		return -1;
	}
	if (write_inputs(c, call, err, errlen) < 0)
		return -1;
	const struct lang *l = c->lang;
	*spec = (struct run_spec){
	    .argv = argv,
	    .env = (const char *const *)l->env,
	    .ro_paths = (const char *const *)l->ro_paths,
	    .stdin_data = call->output,
	    .stdin_len = call->output_len,
	    .limits = c->limits,
	    .trusted_tool = true,
	};
	return 0;
}

int checker_run_call(struct checker *c, const struct checker_call *call, struct checker_verdict *v)
{
	memset(v, 0, sizeof *v);
	v->outcome = CHECKER_FAIL;
	if (!c || !call || !call->in_path)
		return -1;
	const char *argv[MAX_ARGS + 16];
	struct run_spec spec;
	if (validator_spec(c, call, false, argv, MAX_ARGS + 15, &spec, v->message,
			   sizeof v->message) < 0)
		return 0;
	struct run_result rr;
	run_result_init(&rr);
	if (sandbox_run(c->sb, &spec, &rr) < 0 || rr.status == RUN_INTERNAL_ERROR)
		snprintf(v->message, sizeof v->message, "output validator sandbox failed: %s",
			 rr.message[0] ? rr.message : "invalid run specification");
	else
		validator_verdict(c, call, &rr, v);
	run_result_release(&rr);
	return 0;
}

int checker_start(struct checker *c, const struct checker_call *call, long wall_ms,
		  struct sandbox_proc **out, char *err, size_t errlen)
{
	*out = NULL;
	if (!c || !call || !call->in_path) {
		snprintf(err, errlen, "invalid validator call");
		return -1;
	}
	const char *argv[MAX_ARGS + 16];
	struct run_spec spec;
	if (validator_spec(c, call, true, argv, MAX_ARGS + 15, &spec, err, errlen) < 0)
		return -1;
	spec.limits.wall_ms = wall_ms;
	if (sandbox_start(c->sb, &spec, out, err, errlen) < 0)
		return -1;
	return 0;
}

void checker_finish(struct checker *c, const struct checker_call *call, struct sandbox_proc *proc,
		    long timeout_ms, const struct strbuf *err_text, struct checker_verdict *v)
{
	memset(v, 0, sizeof *v);
	v->outcome = CHECKER_FAIL;
	struct run_result rr;
	run_result_init(&rr);
	sandbox_proc_wait(proc, timeout_ms, &rr);
	if (err_text)
		strbuf_add(&rr.err, err_text->buf, err_text->len);
	if (rr.status == RUN_INTERNAL_ERROR)
		snprintf(v->message, sizeof v->message, "output validator sandbox failed: %s",
			 rr.message[0] ? rr.message : "unknown failure");
	else
		validator_verdict(c, call, &rr, v);
	run_result_release(&rr);
}

void checker_close(struct checker *c)
{
	if (!c)
		return;
	if (c->sb)
		sandbox_close(c->sb);
	free(c->problem_id);
	free(c);
}
