/* test_sesscall: the typed session calls and replies (judge/service/session/sesscall.c):
 * kinds and errors by name, the CHECK constraint of the newest migration that
 * lists the kinds, and each kind's call and reply through their stored JSON
 * and back. No database. */
#include <criterion/criterion.h>
#include <dirent.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/strbuf.h"
#include "common/xalloc.h"
#include "judge/service/session/sesscall.h"

Test(sesscall, kinds_by_name)
{
	for (int k = 0; k < SCALL_KIND_COUNT; k++) {
		const char *name = scall_kind_name((enum scall_kind)k);
		cr_assert_neq(strcmp(name, "unknown"), 0, "kind %d has a name", k);
		cr_assert_eq(scall_kind_parse(name), k, "%s", name);
	}
	cr_assert_eq(scall_kind_parse("exec"), -1);
	cr_assert_eq(scall_kind_parse(NULL), -1);
	cr_assert(scall_kind_serial(SCALL_EXECUTE));
	cr_assert(scall_kind_serial(SCALL_CONTEXT_CREATE));
	cr_assert_not(scall_kind_serial(SCALL_PROCESS_INPUT), "stdin never waits behind a cell");
	for (int e = 0; e < SERR_COUNT; e++)
		cr_assert_eq(sess_err_parse(sess_err_name((enum sess_err)e)), e);
	cr_assert_eq(sess_err_parse("nope"), SERR_INTERNAL);
}

/* The newest migration that sets session_calls_kind_check lists exactly the kinds. */
Test(sesscall, kinds_match_the_check_constraint)
{
	DIR *d = opendir("migrations");
	cr_assert_not_null(d, "run from the repository root");
	char newest[256] = "";
	struct dirent *e;
	while ((e = readdir(d))) {
		char path[512];
		snprintf(path, sizeof path, "migrations/%s", e->d_name);
		struct strbuf sb = STRBUF_INIT;
		if (strstr(e->d_name, ".sql") && strbuf_read_file(&sb, path, 1 << 20) == 0 &&
		    strstr(sb.buf, "kind IN (") && strcmp(e->d_name, newest) > 0)
			snprintf(newest, sizeof newest, "%s", e->d_name);
		strbuf_release(&sb);
	}
	closedir(d);
	cr_assert(newest[0], "a migration lists the kinds");
	char path[512];
	snprintf(path, sizeof path, "migrations/%s", newest);
	struct strbuf sb = STRBUF_INIT;
	cr_assert_eq(strbuf_read_file(&sb, path, 1 << 20), 0);
	const char *list = strstr(sb.buf, "kind IN ("), *end = strchr(list, ')');
	int n = 0;
	for (const char *p = strchr(list, '\''); p && p < end; p = strchr(p + 1, '\'')) {
		const char *q = strchr(p + 1, '\'');
		char name[64];
		snprintf(name, sizeof name, "%.*s", (int)(q - p - 1), p + 1);
		cr_assert_eq(scall_kind_parse(name), n, "%s: '%s' is kind %d", newest, name, n);
		n++;
		p = q;
	}
	cr_assert_eq(n, SCALL_KIND_COUNT, "%s lists %d kinds", newest, n);
	strbuf_release(&sb);
}

/* c stored and loaded back, into back. */
static void round_trip(const struct sess_call *c, struct sess_call *back)
{
	cJSON *j = sesscall_store(c);
	char *text = cJSON_PrintUnformatted(j);
	cJSON *again = cJSON_Parse(text);
	char err[256] = "";
	cr_assert_eq(sesscall_load(c->kind, again, c->body.buf, c->body.len, back, err, sizeof err),
		     0, "%s: %s (%s)", scall_kind_name(c->kind), err, text);
	free(text);
	cJSON_Delete(j);
	cJSON_Delete(again);
}

static char **strv(const char *a, const char *b)
{
	const char *v[] = {a, b, NULL};
	return xstrvdup(v);
}

Test(sesscall, calls_round_trip)
{
	struct sess_call c, b;
	sess_call_init(&c, SCALL_EXECUTE);
	c.exec.code = strdup("print(1)");
	c.exec.stdin_data = strdup("in");
	c.exec.env = strv("A=1", "B=x=y");
	c.exec.timeout_ms = 700;
	c.exec.expected = strdup("1\n");
	c.exec.has_compare = true;
	compare_options_init(&c.exec.cmp, CMP_TOKENS);
	c.exec.cmp.float_abs_tol = 0.5;
	c.exec.stream = true;
	snprintf(c.exec.language, sizeof c.exec.language, "bash");
	snprintf(c.context, sizeof c.context, "ctx1");
	round_trip(&c, &b);
	cr_assert_str_eq(b.exec.language, "bash");
	cr_assert_str_eq(b.exec.code, "print(1)");
	cr_assert_str_eq(b.exec.stdin_data, "in");
	cr_assert(b.exec.env && !strcmp(b.exec.env[1], "B=x=y") && !b.exec.env[2]);
	cr_assert_eq(b.exec.timeout_ms, 700);
	cr_assert_str_eq(b.exec.expected, "1\n");
	cr_assert(b.exec.has_compare && b.exec.cmp.mode == CMP_TOKENS);
	cr_assert_float_eq(b.exec.cmp.float_abs_tol, 0.5, 1e-12);
	cr_assert(b.exec.stream);
	cr_assert_str_eq(b.context, "ctx1");
	sess_call_release(&c), sess_call_release(&b);

	sess_call_init(&c, SCALL_INSTALL);
	snprintf(c.install.manager, sizeof c.install.manager, "npm");
	c.install.packages = strv("lodash@4", "@types/node");
	round_trip(&c, &b);
	cr_assert_str_eq(b.install.manager, "npm");
	cr_assert_str_eq(b.install.packages[1], "@types/node");
	cr_assert_null(b.install.packages[2]);
	sess_call_release(&c), sess_call_release(&b);

	sess_call_init(&c, SCALL_FILE_PUT);
	c.path = strdup("a/b.bin");
	strbuf_add(&c.body, "\0\1\2", 3);
	round_trip(&c, &b);
	cr_assert_str_eq(b.path, "a/b.bin");
	cr_assert(b.body.len == 3 && !memcmp(b.body.buf, "\0\1\2", 3), "the bytes travel beside");
	sess_call_release(&c), sess_call_release(&b);

	sess_call_init(&c, SCALL_CONTEXT_CREATE);
	snprintf(c.ctx.language, sizeof c.ctx.language, "bash");
	c.path = strdup("w");
	round_trip(&c, &b);
	cr_assert_str_eq(b.ctx.language, "bash");
	cr_assert_str_eq(b.path, "w");
	sess_call_release(&c), sess_call_release(&b);

	sess_call_init(&c, SCALL_PROCESS_START);
	c.proc.argv = strv("/bin/sh", "-c");
	c.proc.env = strv("A=1", "B=2");
	c.path = strdup("");
	c.proc.stdin_open = true;
	c.proc.timeout_ms = 9000;
	snprintf(c.proc.tag, sizeof c.proc.tag, "srv");
	round_trip(&c, &b);
	cr_assert_str_eq(b.proc.argv[1], "-c");
	cr_assert_str_eq(b.proc.env[1], "B=2");
	cr_assert(b.proc.stdin_open);
	cr_assert_eq(b.proc.timeout_ms, 9000);
	cr_assert_str_eq(b.proc.tag, "srv");
	sess_call_release(&c), sess_call_release(&b);

	sess_call_init(&c, SCALL_FILE_MOVE);
	c.path = strdup("a/b.txt");
	c.to = strdup("c/d.txt");
	round_trip(&c, &b);
	cr_assert_str_eq(b.path, "a/b.txt");
	cr_assert_str_eq(b.to, "c/d.txt");
	sess_call_release(&c), sess_call_release(&b);

	sess_call_init(&c, SCALL_PROCESS_SIGNAL);
	c.proc.pid = 12;
	c.proc.signal = SIGTERM;
	round_trip(&c, &b);
	cr_assert(b.proc.pid == 12 && b.proc.signal == SIGTERM);
	sess_call_release(&c), sess_call_release(&b);
}

Test(sesscall, bad_stored_calls_are_errors)
{
	struct sess_call b;
	char err[256];
	cJSON *j = cJSON_Parse("{}");
	cr_assert_eq(sesscall_load(SCALL_EXECUTE, j, NULL, 0, &b, err, sizeof err), -1);
	cr_assert(strstr(err, "no code"), "%s", err);
	sess_call_release(&b);
	cr_assert_eq(sesscall_load(SCALL_PROCESS_START, j, NULL, 0, &b, err, sizeof err), -1);
	sess_call_release(&b);
	cr_assert_eq(sesscall_load(SCALL_CLOSE, NULL, NULL, 0, &b, err, sizeof err), -1);
	sess_call_release(&b);
	cJSON_Delete(j);
}

/* r (an answer of kind k) stored and loaded back into back. */
static void reply_trip(enum scall_kind k, const struct sess_reply *r, struct sess_reply *back)
{
	cJSON *j = sesscall_reply_store(k, r);
	char *text = cJSON_PrintUnformatted(j);
	cJSON *again = cJSON_Parse(text);
	const struct strbuf *bytes = &r->file.bytes;
	cr_assert_eq(
	    sesscall_reply_load(k, again, bytes->len ? bytes->buf : NULL, bytes->len, back), 0,
	    "%s", text);
	free(text);
	cJSON_Delete(j);
	cJSON_Delete(again);
}

Test(sesscall, replies_round_trip)
{
	struct sess_reply r, b;
	sess_reply_init(&r);
	struct sess_cell *c = &r.cell;
	c->status = CELL_ERROR;
	strbuf_addstr(&c->out, "out\n");
	strbuf_addstr(&c->err, "err\n");
	c->err_truncated = true;
	c->result = strdup("'x'");
	c->has_error = true;
	c->error_name = strdup("ValueError");
	c->error_value = strdup("no");
	c->error_traceback = strdup("tb");
	c->results = strdup("[{\"text/html\":\"<b>x</b>\",\"is_main_result\":false}]");
	c->results_dropped = 2;
	c->execution_count = 4;
	c->time_ms = 12, c->wall_ms = 15, c->memory_kb = 2048, c->session_memory_kb = 9000;
	c->restarted = true;
	snprintf(c->message, sizeof c->message, "lost");
	c->has_verdict = true;
	c->verdict = SUB_WRONG_ANSWER;
	c->feedback.present = true;
	c->feedback.line = 2, c->feedback.column = 3;
	snprintf(c->feedback.got, sizeof c->feedback.got, "b");
	reply_trip(SCALL_EXECUTE, &r, &b);
	cr_assert_eq(b.cell.status, CELL_ERROR);
	cr_assert_str_eq(b.cell.out.buf, "out\n");
	cr_assert_str_eq(b.cell.err.buf, "err\n");
	cr_assert(b.cell.err_truncated && !b.cell.out_truncated);
	cr_assert_str_eq(b.cell.result, "'x'");
	cr_assert(b.cell.has_error);
	cr_assert_str_eq(b.cell.error_name, "ValueError");
	cr_assert_str_eq(b.cell.error_traceback, "tb");
	cr_assert_str_eq(b.cell.results, "[{\"text/html\":\"<b>x</b>\",\"is_main_result\":false}]");
	cr_assert_eq(b.cell.results_dropped, 2);
	cr_assert_eq(b.cell.execution_count, 4);
	cr_assert_eq(b.cell.session_memory_kb, 9000);
	cr_assert(b.cell.restarted);
	cr_assert_str_eq(b.cell.message, "lost");
	cr_assert(b.cell.has_verdict && b.cell.verdict == SUB_WRONG_ANSWER);
	cr_assert(b.cell.feedback.present && b.cell.feedback.column == 3);
	cr_assert_str_eq(b.cell.feedback.got, "b");
	sess_reply_release(&r), sess_reply_release(&b);

	/* a cell with no result and no error: both null, no verdict */
	sess_reply_init(&r);
	r.cell.status = CELL_OK;
	reply_trip(SCALL_EXECUTE, &r, &b);
	cr_assert(b.cell.status == CELL_OK && !b.cell.result && !b.cell.has_error);
	cr_assert(!b.cell.results && !b.cell.results_dropped);
	cr_assert_not(b.cell.has_verdict);
	sess_reply_release(&r), sess_reply_release(&b);

	sess_reply_init(&r);
	r.file.path = strdup("p.png");
	snprintf(r.file.type, sizeof r.file.type, "image/png");
	strbuf_add(&r.file.bytes, "\x89PNG\0", 5);
	reply_trip(SCALL_FILE_GET, &r, &b);
	cr_assert_str_eq(b.file.type, "image/png");
	cr_assert(b.file.bytes.len == 5 && !memcmp(b.file.bytes.buf, "\x89PNG\0", 5));
	sess_reply_release(&r), sess_reply_release(&b);

	/* mkdir's one entry (stat's and move's alike) and whether it was there */
	sess_reply_init(&r);
	r.file.path = strdup("new");
	r.file.existed = true;
	r.file.entries = calloc(1, sizeof *r.file.entries);
	r.file.nentries = 1;
	snprintf(r.file.entries[0].name, sizeof r.file.entries[0].name, "new");
	r.file.entries[0].type = 'd';
	r.file.entries[0].mode = 0755;
	r.file.entries[0].mtime = 1700000000;
	reply_trip(SCALL_FILE_MKDIR, &r, &b);
	cr_assert(b.file.existed && b.file.nentries == 1);
	cr_assert(b.file.entries[0].type == 'd' && b.file.entries[0].mode == 0755);
	cr_assert_eq(b.file.entries[0].mtime, 1700000000);
	sess_reply_release(&r), sess_reply_release(&b);

	sess_reply_init(&r);
	sess_reply_add_context(&r, "default", "python", "");
	sess_reply_add_context(&r, "c2", "bash", "w");
	struct sess_process_info p = {.pid = 3, .running = false, .exited = false, .signal = 9};
	p.argv = strv("sleep", "9");
	snprintf(p.tag, sizeof p.tag, "t");
	sess_reply_add_process(&r, &p);
	xstrvfree(p.argv);
	reply_trip(SCALL_PROCESS_LIST, &r, &b);
	cr_assert_eq(b.ncontexts, 2);
	cr_assert_str_eq(b.contexts[1].cwd, "w");
	cr_assert_eq(b.nprocs, 1);
	cr_assert(b.procs[0].pid == 3 && b.procs[0].signal == 9 && !b.procs[0].exited);
	cr_assert_str_eq(b.procs[0].argv[1], "9");
	cr_assert_str_eq(b.procs[0].tag, "t");
	sess_reply_release(&r), sess_reply_release(&b);
}

Test(sesscall, errors_round_trip)
{
	struct sess_reply r, b;
	sess_reply_init(&r);
	sess_reply_fail(&r, SERR_NOT_FOUND, "no file '%s'", "x");
	reply_trip(SCALL_FILE_GET, &r, &b);
	cr_assert_eq(b.err, SERR_NOT_FOUND);
	cr_assert_str_eq(b.message, "no file 'x'");
	sess_reply_release(&r), sess_reply_release(&b);
	/* what the SQL of an ended session stores (sessdb.c's GONE) */
	cJSON *j = cJSON_Parse("{\"error\": {\"code\": \"session_lost\", \"message\": \"gone\"}}");
	cr_assert_eq(sesscall_reply_load(SCALL_EXECUTE, j, NULL, 0, &b), 0);
	cr_assert_eq(b.err, SERR_SESSION_LOST);
	sess_reply_release(&b);
	cJSON_Delete(j);
	j = cJSON_Parse("{\"http\": 200, \"body\": {}}");
	cr_assert_eq(sesscall_reply_load(SCALL_EXECUTE, j, NULL, 0, &b), -1,
		     "neither form: not read");
	cr_assert_eq(b.err, SERR_INTERNAL);
	sess_reply_release(&b);
	cJSON_Delete(j);
}
