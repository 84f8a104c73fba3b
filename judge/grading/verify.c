/* verify: a package's example submissions against their folders' verdicts (see verify.h). */
#include "judge/grading/verify.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/config.h"
#include "common/strbuf.h"
#include "common/xalloc.h"
#include "judge/grading/checker.h"
#include "judge/grading/limits.h"
#include "judge/grading/grade.h"
#include "judge/grading/lang.h"
#include "judge/grading/problem.h"
#include "judge/grading/status.h"

#define SOURCE_FILE_MAX ((size_t)4 << 20)
/* Probe limit for accepted submissions when the package states no time limit. */
#define PROBE_LIMIT_MS 10000

/* Verdict sets, as bits of enum sub_status. */
#define BIT(s) (1u << (s))
#define REJECTED                                                                                   \
	(BIT(SUB_WRONG_ANSWER) | BIT(SUB_TIMEOUT) | BIT(SUB_RUNTIME_ERROR) |                       \
	 BIT(SUB_MEMORY_LIMIT) | BIT(SUB_OUTPUT_LIMIT))

#define RTE (BIT(SUB_RUNTIME_ERROR) | BIT(SUB_MEMORY_LIMIT))

struct expectation {
	const char *names;  /* folder spellings, compared after folding case and '-' to '_' */
	unsigned final;	    /* allowed overall verdicts (first failing test decides) */
	unsigned permitted; /* all_tests: every test's verdict in this set */
	unsigned required;  /* all_tests: some test's verdict in this set (0: none) */
	bool tle;	    /* used as the upper bound of the time limit */
	bool partial;	    /* scoring problems: a score above 0 and below the maximum */
};

static const struct expectation expectations[] = {
    {" accepted ac correct ", BIT(SUB_ACCEPTED), BIT(SUB_ACCEPTED), 0, false, false},
    {" wrong_answer wa wrong ", BIT(SUB_WRONG_ANSWER), BIT(SUB_ACCEPTED) | BIT(SUB_WRONG_ANSWER),
     BIT(SUB_WRONG_ANSWER), false, false},
    {" time_limit_exceeded tle timelimit timeout time_limit ", BIT(SUB_TIMEOUT),
     BIT(SUB_ACCEPTED) | BIT(SUB_TIMEOUT), BIT(SUB_TIMEOUT), true, false},
    /* the package format knows no memory verdict: a program killed for memory
     * crashed (Kattis' own hello example files one under run_time_error) */
    {" run_time_error runtime_error rte re run_error crash ", RTE, BIT(SUB_ACCEPTED) | RTE, RTE,
     false, false},
    {" memory_limit_exceeded mle memory_limit memory ", BIT(SUB_MEMORY_LIMIT),
     BIT(SUB_ACCEPTED) | BIT(SUB_MEMORY_LIMIT), BIT(SUB_MEMORY_LIMIT), false, false},
    {" output_limit_exceeded ole output_limit output ", BIT(SUB_OUTPUT_LIMIT),
     BIT(SUB_ACCEPTED) | BIT(SUB_OUTPUT_LIMIT), BIT(SUB_OUTPUT_LIMIT), false, false},
    {" compile_error ce compilation_error compiler_error ", BIT(SUB_COMPILE_ERROR),
     BIT(SUB_COMPILE_ERROR), BIT(SUB_COMPILE_ERROR), false, false},
    {" rejected ", REJECTED, REJECTED | BIT(SUB_ACCEPTED), REJECTED, false, false},
    /* scoring problems: some credit, not all (any verdict: the first failing test's) */
    {" partially_accepted partial ", REJECTED | BIT(SUB_ACCEPTED), REJECTED | BIT(SUB_ACCEPTED), 0,
     false, true},
    {" brute_force ", BIT(SUB_TIMEOUT) | BIT(SUB_RUNTIME_ERROR) | BIT(SUB_MEMORY_LIMIT),
     BIT(SUB_ACCEPTED) | BIT(SUB_TIMEOUT) | BIT(SUB_RUNTIME_ERROR) | BIT(SUB_MEMORY_LIMIT),
     BIT(SUB_TIMEOUT) | BIT(SUB_RUNTIME_ERROR) | BIT(SUB_MEMORY_LIMIT), false, false},
};

static const struct expectation *expectation_of(const char *folder)
{
	char key[80];
	size_t n = 0;
	key[n++] = ' ';
	for (const char *p = folder; *p && n < sizeof key - 2; p++)
		key[n++] = *p == '-' ? '_' : (char)tolower((unsigned char)*p);
	key[n++] = ' ';
	key[n] = 0;
	for (size_t i = 0; i < sizeof expectations / sizeof expectations[0]; i++)
		if (strstr(expectations[i].names, key))
			return &expectations[i];
	return NULL;
}

static void set_names(char *buf, size_t len, unsigned set)
{
	buf[0] = 0;
	for (int s = 0; s < SUB_STATUS_COUNT; s++)
		if (set & BIT(s)) {
			size_t n = strlen(buf);
			snprintf(buf + n, len - n, "%s%s", n ? " or " : "", status_name(s));
		}
}

/* The state of one verify_problem call. */
struct verify_ctx {
	const struct verify_opts *o;
	struct verify_counts n;
	cJSON *subs;  /* the report's "submissions" */
	cJSON *notes; /* the report's "notes" */
};

static void say(struct verify_ctx *v, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void say(struct verify_ctx *v, const char *fmt, ...)
{
	if (!v->o->line)
		return;
	struct strbuf sb = STRBUF_INIT;
	va_list ap;
	va_start(ap, fmt);
	strbuf_vaddf(&sb, fmt, ap);
	va_end(ap);
	v->o->line(v->o->arg, sb.buf);
	strbuf_release(&sb);
}

static int read_file(const char *dir, const char *name, struct strbuf *sb, char *err, size_t errlen)
{
	struct strbuf path = STRBUF_INIT;
	strbuf_addf(&path, "%s/%s", dir, name);
	int rc = strbuf_read_file(sb, path.buf, SOURCE_FILE_MAX);
	if (rc < 0)
		snprintf(err, errlen, "cannot read '%s': %s", name,
			 rc == -EFBIG ? "file too large" : strerror(-rc));
	strbuf_release(&path);
	return rc < 0 ? -1 : 0;
}

/* The request for one submission of the package into req (initialized here).
 * Returns 0, or -1 with err. */
static int make_request(const struct problem *p, const struct problem_submission *s,
			const struct lang *l, long time_ms, bool all_tests,
			struct grade_request *req, char *err, size_t errlen)
{
	const struct problem_program *prog = &s->prog;
	model_request_init(req);
	model_set(&req->language, l->name, strlen(l->name));
	model_set(&req->problem, p->id, strlen(p->id));
	for (int i = 0; i < prog->nfiles; i++) {
		struct strbuf text = STRBUF_INIT;
		int rc = read_file(prog->dir, prog->files[i], &text, err, errlen);
		/* files are text: as always, a NUL byte ends one */
		size_t len = rc < 0 ? 0 : strlen(text.buf);
		if (rc == 0 && !strcmp(prog->files[i], prog->main_file)) {
			model_set(&req->source, text.buf, len);
			req->source_len = len;
		} else if (rc == 0) {
			model_request_add_file(req, prog->files[i], text.buf, len);
		}
		strbuf_release(&text);
		if (rc < 0)
			return -1;
	}
	req->has_limits = true;
	req->limits.time_ms = time_ms;
	if (p->limits.memory_mb > 0)
		req->limits.memory_mb = p->limits.memory_mb;
	if (p->limits.output_mb > 0)
		req->limits.output_kb = p->limits.output_mb * 1024;
	req->run_all_tests = all_tests;
	return 0;
}

/* Scoring problems: accepted submissions get the maximum, partially accepted
 * ones more than 0 and less. */
static bool score_matches(const struct expectation *e, const struct grade_result *r, char *why,
			  size_t whylen)
{
	bool full = r->has_score && r->score >= r->max_score - 1e-9;
	if (e->partial && !(r->has_score && r->score > 1e-9 && !full)) {
		snprintf(why, whylen, "score %g of %g, expected a partial score",
			 r->has_score ? r->score : 0, r->max_score);
		return false;
	}
	if (e->final == BIT(SUB_ACCEPTED) && r->has_score && !full && r->status == SUB_ACCEPTED) {
		snprintf(why, whylen, "accepted with score %g of %g, expected the maximum",
			 r->score, r->max_score);
		return false;
	}
	return true;
}

/* DOMjudge's name of a result (judgedaemon determineVerdict): a memory kill is
 * a run error, a wrong answer with no output at all is NO-OUTPUT (not in
 * interactive problems, where the validator reads the output). */
static const char *domjudge_name(const struct problem *p, const struct grade_result *r)
{
	switch (r->status) {
	case SUB_ACCEPTED:
		return "CORRECT";
	case SUB_WRONG_ANSWER:
		return !p->interactive && r->ran && r->out.len == 0 ? "NO-OUTPUT" : "WRONG-ANSWER";
	case SUB_TIMEOUT:
		return "TIMELIMIT";
	case SUB_RUNTIME_ERROR:
	case SUB_MEMORY_LIMIT:
		return "RUN-ERROR";
	case SUB_OUTPUT_LIMIT:
		return "OUTPUT-LIMIT";
	case SUB_COMPILE_ERROR:
		return "COMPILER-ERROR";
	default:
		return "JUDGE-ERROR";
	}
}

/* The verdict a run made at a higher limit would have had under cpu_ms and
 * wall_ms: the first test that went over them is a timeout, unless an earlier
 * test failed (problemtools judge/cache.py _reclassify). */
static enum sub_status verdict_at(const struct grade_result *r, long cpu_ms, long wall_ms)
{
	if (!r->ran || r->status == SUB_COMPILE_ERROR || r->status == SUB_INTERNAL_ERROR)
		return r->status;
	if (!r->has_tests || r->ntests == 0)
		return r->run.time_ms > cpu_ms || r->run.wall_ms > wall_ms ? SUB_TIMEOUT
									   : r->status;
	for (int i = 0; i < r->ntests; i++) {
		const struct grade_test_out *t = &r->tests[i];
		if (t->run.time_ms > cpu_ms || t->run.wall_ms > wall_ms)
			return SUB_TIMEOUT;
		if (t->status != SUB_ACCEPTED)
			return t->status;
	}
	return r->status;
}

/* What one submission must get. */
struct expect {
	struct expectation e;	  /* by its folder (or built from dj) */
	struct problem_expect dj; /* DOMjudge names, when dj.n > 0 */
	bool at_limit_too;	  /* problemtools: the verdict at the limit counts too */
	long low_ms, low_wall_ms; /* the limit, when the run was at a higher one */
};

/* Checks result against x. Returns true when it matches; why says what differs. */
static bool matches(const struct verify_ctx *v, const struct problem *p, const struct expect *x,
		    const struct grade_result *result, char *why, size_t whylen)
{
	const struct expectation *e = &x->e;
	enum sub_status s = result->status;
	const char *st = status_name(s);
	char want[160];
	why[0] = 0;
	if (s == SUB_INTERNAL_ERROR) {
		snprintf(why, whylen, "internal_error: %s",
			 result->message ? result->message : "(no message)");
		return false;
	}
	if (x->dj.has_score && !(result->has_score && fabs(result->score - x->dj.score) < 1e-9)) {
		snprintf(why, whylen, "score %g, expected %g",
			 result->has_score ? result->score : 0, x->dj.score);
		return false;
	}
	if (x->dj.n > 0) {
		const char *name = domjudge_name(p, result);
		size_t n = 0;
		want[0] = 0;
		for (int i = 0; i < x->dj.n; i++) {
			if (!strcmp(x->dj.names[i], name))
				return true;
			n += (size_t)snprintf(want + n, n < sizeof want ? sizeof want - n : 0,
					      "%s%s", i ? ", " : "", x->dj.names[i]);
			if (n >= sizeof want)
				n = sizeof want - 1;
		}
		snprintf(why, whylen, "got %s (DOMjudge: %s), expected %s", st, name, want);
		return false;
	}
	if (!score_matches(e, result, why, whylen))
		return false;
	if (!v->o->all_tests || s == SUB_COMPILE_ERROR) {
		if (e->final & BIT(s))
			return true;
		enum sub_status low = x->at_limit_too && !p->scoring
					  ? verdict_at(result, x->low_ms, x->low_wall_ms)
					  : s;
		if (e->final & BIT(low))
			return true;
		set_names(want, sizeof want, e->final);
		if (low != s)
			snprintf(why, whylen, "got %s (%s at the time limit), expected %s", st,
				 status_name(low), want);
		else
			snprintf(why, whylen, "got %s, expected %s", st, want);
		return false;
	}
	/* 2025-09 rules: every test's verdict permitted, some test's verdict required */
	bool required_seen = e->required == 0;
	for (int i = 0; i < result->ntests; i++) {
		const struct grade_test_out *t = &result->tests[i];
		if (!(e->permitted & BIT(t->status))) {
			set_names(want, sizeof want, e->permitted);
			snprintf(why, whylen, "test %s got %s, only %s permitted",
				 t->name ? t->name : "?", status_name(t->status), want);
			return false;
		}
		required_seen |= (e->required & BIT(t->status)) != 0;
	}
	if (!required_seen) {
		set_names(want, sizeof want, e->required);
		snprintf(why, whylen, "no test got %s (overall %s)", want, st);
		return false;
	}
	return true;
}

/* DOMjudge's result names as verdict sets of the table above. */
static const struct {
	const char *name, *folder;
} dj_rows[] = {
    {"CORRECT", "accepted"},
    {"WRONG-ANSWER", "wrong_answer"},
    {"NO-OUTPUT", "wrong_answer"},
    {"TIMELIMIT", "time_limit_exceeded"},
    {"RUN-ERROR", "run_time_error"},
    {"MEMORY-LIMIT", "memory_limit_exceeded"},
    {"OUTPUT-LIMIT", "output_limit_exceeded"},
    {"COMPILER-ERROR", "compile_error"},
};

/* Fills x for s: its DOMjudge annotation, else its folder (a DOMjudge-only
 * folder name such as no_output as a one-name annotation). Returns false with
 * why when there is nothing to check it against (then it is skipped). */
static bool expect_of(const struct problem *p, const struct problem_submission *s, struct expect *x,
		      char *why, size_t whylen)
{
	memset(x, 0, sizeof *x);
	char err[256];
	if (problem_expect_read(s, &x->dj, err, sizeof err) < 0) {
		snprintf(why, whylen, "%s", err);
		return false;
	}
	const struct expectation *fe = expectation_of(s->folder);
	if (!x->dj.n) {
		char name[32];
		problem_expect_name(s->folder, strlen(s->folder), name, sizeof name);
		if (!fe && !strcmp(name, "NO-OUTPUT")) {
			x->dj.n = 1;
			snprintf(x->dj.names[0], sizeof x->dj.names[0], "%s", name);
		} else if (!fe || (fe->partial && !p->scoring)) {
			/* partial credit exists in scoring problems only */
			snprintf(why, whylen, "no expected verdict for folder '%s'", s->folder);
			return false;
		} else {
			x->e = *fe;
			return true;
		}
	}
	/* DOMjudge names: each must be one the judge can give */
	memset(&x->e, 0, sizeof x->e);
	for (int i = 0; i < x->dj.n; i++) {
		const struct expectation *row = NULL;
		for (size_t k = 0; k < sizeof dj_rows / sizeof dj_rows[0]; k++)
			if (!strcmp(dj_rows[k].name, x->dj.names[i]))
				row = expectation_of(dj_rows[k].folder);
		if (!row) {
			snprintf(why, whylen,
				 "expected result %s%s%s is not a verdict (DOMjudge checks it by "
				 "hand or at submission)",
				 x->dj.names[i], x->dj.annotated ? " in " : "",
				 x->dj.annotated ? x->dj.file : "");
			return false;
		}
		x->e.final |= row->final;
		x->e.permitted |= row->permitted;
		x->e.required |= row->required;
	}
	return true;
}

/* What x expects, in the package's words: DOMjudge's names or the folder. */
static void expected_text(const struct problem_submission *s, const struct expect *x, char *buf,
			  size_t len)
{
	size_t n = 0;
	buf[0] = 0;
	for (int i = 0; i < x->dj.n && n < len; i++)
		n += (size_t)snprintf(buf + n, len - n, "%s%s", i ? "," : "", x->dj.names[i]);
	if (!x->dj.n)
		snprintf(buf, len, "%s", s->folder);
}

static bool lang_selected(const struct verify_opts *o, const char *name)
{
	if (!o->only_langs || !o->only_langs[0])
		return true;
	for (int i = 0; o->only_langs[i]; i++)
		if (!strcmp(o->only_langs[i], name))
			return true;
	return false;
}

/* Grades one submission. Returns the result (release with result_free) or
 * NULL with err. */
static struct grade_result *grade_one(struct verify_ctx *v, const struct problem *p,
				      struct checker *chk, int slot,
				      const struct problem_submission *s, const struct lang *l,
				      long time_ms, char *err, size_t errlen)
{
	const struct verify_opts *o = v->o;
	struct grade_request req;
	struct grade_result *res = NULL;
	err[0] = 0;
	if (make_request(p, s, l, time_ms, o->all_tests, &req, err, errlen) < 0)
		goto out;
	res = xmalloc(sizeof *res);
	struct grade_env env = {.cfg = o->cfg,
				.langs = o->langs,
				.backend = o->backend,
				.slot = slot,
				.reuse_key = o->reuse_key,
				.problem = p,
				.checker = chk,
				.cancel = o->cancel};
	grade_request(&env, &req, res);
out:
	model_request_release(&req);
	return res;
}

static void result_free(struct grade_result *res)
{
	if (res)
		model_result_release(res);
	free(res);
}

/* The report's entry of one submission. */
static cJSON *entry(cJSON *subs, const struct problem_submission *s, const char *lang,
		    const char *outcome, const struct expect *x)
{
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "path", s->path);
	if (lang)
		cJSON_AddStringToObject(o, "language", lang);
	else
		cJSON_AddNullToObject(o, "language");
	char want[160];
	if (x)
		expected_text(s, x, want, sizeof want);
	cJSON_AddStringToObject(o, "expected", x ? want : s->folder);
	cJSON_AddStringToObject(o, "outcome", outcome);
	cJSON_AddItemToArray(subs, o);
	return o;
}

static void report(struct verify_ctx *v, const struct problem *p,
		   const struct problem_submission *s, const char *lang, bool ok,
		   const struct grade_result *res, const char *why, const struct expect *x)
{
	cJSON *e = entry(v->subs, s, lang, ok ? "ok" : "fail", x);
	if (res) {
		cJSON_AddStringToObject(e, "status", status_name(res->status));
		cJSON_AddNumberToObject(e, "time_ms", res->ran ? (double)res->run.time_ms : 0);
		if (res->has_score) {
			cJSON_AddNumberToObject(e, "score", res->score);
			cJSON_AddNumberToObject(e, "max_score", res->max_score);
		}
	}
	if (!ok)
		cJSON_AddStringToObject(e, "message", why);
	if (ok) {
		v->n.passed++;
		char score[64] = "";
		if (res->has_score)
			snprintf(score, sizeof score, ", score %g of %g", res->score,
				 res->max_score);
		char want[160];
		expected_text(s, x, want, sizeof want);
		say(v, "ok   %s %s (%s): %s%s, %ld ms [expected %s]", p->id, s->path, lang,
		    status_name(res->status), score, res->ran ? res->run.time_ms : 0, want);
	} else {
		v->n.failed++;
		say(v, "FAIL %s %s (%s): %s", p->id, s->path, lang, why);
		cJSON *json = v->o->verbose && res ? model_result_render(res) : NULL;
		char *text = json ? cJSON_Print(json) : NULL;
		if (text)
			say(v, "%s", text);
		free(text);
		cJSON_Delete(json);
	}
}

static void skip(struct verify_ctx *v, const struct problem *p, const struct problem_submission *s,
		 const char *why)
{
	v->n.skipped++;
	cJSON_AddStringToObject(entry(v->subs, s, s->prog.lang, "skip", NULL), "message", why);
	say(v, "skip %s %s: %s", p->id, s->path, why);
}

/* One submission of a pass; results are printed in submission order. */
struct job {
	const struct problem_submission *s;
	struct expect x;
	const struct lang *l;
	long ms;
	char skip_why[320]; /* not run: why */
	struct grade_result *res;
	char err[512];
	bool done;
};

/* The submissions of one problem that run under one time limit, spread over
 * o->jobs threads, each with its own sandbox slot and output validator. */
struct pass {
	struct verify_ctx *v;
	const struct problem *p;
	struct job *jobs;
	int njobs, next, printed;
	pthread_mutex_t mu;
	struct checker *chk0; /* the first slot's validator, built by the caller */
	double slowest_ms;
	bool any_ac;
};

struct pass_thread {
	struct pass *ps;
	int slot;
	bool first;
	pthread_t tid;
};

/* Prints the finished jobs at the head of the list (called with mu held). */
static void flush_done(struct pass *ps)
{
	while (ps->printed < ps->njobs && ps->jobs[ps->printed].done) {
		struct job *j = &ps->jobs[ps->printed++];
		if (j->skip_why[0]) {
			skip(ps->v, ps->p, j->s, j->skip_why);
			continue;
		}
		const char *lname = j->l->name;
		if (!j->res) {
			report(ps->v, ps->p, j->s, lname, false, NULL, j->err, &j->x);
			continue;
		}
		char why[600];
		bool ok = matches(ps->v, ps->p, &j->x, j->res, why, sizeof why);
		if (ok && j->x.e.final == BIT(SUB_ACCEPTED)) {
			ps->any_ac = true;
			double t = j->res->ran ? (double)j->res->run.time_ms : 0;
			if (t > ps->slowest_ms)
				ps->slowest_ms = t;
		}
		report(ps->v, ps->p, j->s, lname, ok, j->res, why, &j->x);
		result_free(j->res);
		j->res = NULL;
	}
}

static bool cancelled(const struct verify_opts *o)
{
	return o->cancel && atomic_load(o->cancel);
}

static void *pass_worker(void *arg)
{
	struct pass_thread *pt = arg;
	struct pass *ps = pt->ps;
	const struct verify_opts *o = ps->v->o;
	struct checker *chk = pt->first ? ps->chk0 : NULL;
	char chk_err[512] = "";
	for (;;) {
		pthread_mutex_lock(&ps->mu);
		int i = ps->next < ps->njobs ? ps->next++ : -1;
		pthread_mutex_unlock(&ps->mu);
		if (i < 0)
			break;
		struct job *j = &ps->jobs[i];
		if (j->skip_why[0])
			continue; /* done from the start */
		if (cancelled(o))
			snprintf(j->err, sizeof j->err, "verification stopped");
		else if (ps->p->custom_validator && !chk && !chk_err[0] &&
			 checker_build(ps->p, o->langs, o->cfg, o->backend, pt->slot, &chk, chk_err,
				       sizeof chk_err) < 0 &&
			 !chk_err[0])
			snprintf(chk_err, sizeof chk_err, "output validator build failed");
		if (j->err[0])
			;
		else if (ps->p->custom_validator && !chk)
			snprintf(j->err, sizeof j->err, "%s", chk_err);
		else
			j->res = grade_one(ps->v, ps->p, chk, pt->slot, j->s, j->l, j->ms, j->err,
					   sizeof j->err);
		pthread_mutex_lock(&ps->mu);
		j->done = true;
		flush_done(ps);
		pthread_mutex_unlock(&ps->mu);
	}
	if (!pt->first)
		checker_close(chk);
	return NULL;
}

/* Runs the submissions of p that are expected to be accepted (accepted_pass)
 * or the others: those at tle_ms, judged at it and at time_ms, except those
 * with DOMjudge's expected results, run and judged at time_ms. */
static void run_pass(struct verify_ctx *v, const struct problem *p, struct checker *chk,
		     bool accepted_pass, long time_ms, long tle_ms, double *slowest_ms,
		     bool *any_ac)
{
	const struct verify_opts *o = v->o;
	struct pass ps = {.v = v, .p = p, .chk0 = chk, .slowest_ms = *slowest_ms};
	ps.jobs = xcalloc((size_t)p->nsubs + 1, sizeof *ps.jobs);
	pthread_mutex_init(&ps.mu, NULL);
	for (int i = 0; i < p->nsubs; i++) {
		const struct problem_submission *s = &p->subs[i];
		struct expect x;
		char why[256];
		bool has = expect_of(p, s, &x, why, sizeof why);
		bool is_ac = has && x.e.final == BIT(SUB_ACCEPTED);
		if (is_ac != accepted_pass)
			continue;
		struct job *j = &ps.jobs[ps.njobs++];
		j->s = s;
		j->x = x;
		const char *lname = s->prog.lang;
		if (!has) {
			snprintf(j->skip_why, sizeof j->skip_why, "%s", why);
		} else if (s->prog.unsupported || !lname) {
			snprintf(j->skip_why, sizeof j->skip_why, "%s",
				 s->prog.unsupported ? s->prog.unsupported : "unknown language");
		} else if (!(j->l = lang_find(o->langs, lname)) || !lang_selected(o, lname)) {
			snprintf(j->skip_why, sizeof j->skip_why, "language %s %s", lname,
				 j->l ? "not selected" : "is not configured");
		}
		j->ms = is_ac || x.dj.n > 0 ? time_ms : tle_ms;
		if (j->ms > time_ms) {
			j->x.at_limit_too = true;
			j->x.low_ms = time_ms;
			j->x.low_wall_ms =
			    limits_package_wall_ms(time_ms, p->limits.time_limit_to_tle);
		}
		/* skipped ones are done from the start; they keep their place in the output */
		j->done = j->skip_why[0] != 0;
	}
	int nthreads = o->jobs > 1 ? o->jobs : 1;
	struct pass_thread *th = xcalloc((size_t)nthreads, sizeof *th);
	pthread_mutex_lock(&ps.mu);
	flush_done(&ps);
	pthread_mutex_unlock(&ps.mu);
	for (int t = 0; t < nthreads; t++) {
		th[t].ps = &ps;
		th[t].slot = o->first_slot + t;
		th[t].first = t == 0;
		if (t > 0 && pthread_create(&th[t].tid, NULL, pass_worker, &th[t]) != 0)
			th[t].ps = NULL; /* fewer threads: the others take its share */
	}
	pass_worker(&th[0]);
	for (int t = 1; t < nthreads; t++)
		if (th[t].ps)
			pthread_join(th[t].tid, NULL);
	pthread_mutex_lock(&ps.mu);
	flush_done(&ps);
	pthread_mutex_unlock(&ps.mu);
	pthread_mutex_destroy(&ps.mu);
	free(th);
	free(ps.jobs);
	*slowest_ms = ps.slowest_ms;
	*any_ac = *any_ac || ps.any_ac;
}

/* Skips every submission of p (or p itself when it has none) with why. */
static void skip_all(struct verify_ctx *v, const struct problem *p, const char *why)
{
	for (int i = 0; i < p->nsubs; i++)
		skip(v, p, &p->subs[i], why);
	if (!p->nsubs) {
		v->n.skipped++;
		say(v, "skip %s: %s", p->id, why);
	}
}

/* The problem's type as verify reports it. */
static const char *kind_of(const struct problem *p)
{
	if (p->interactive)
		return p->scoring ? "interactive scoring" : "interactive";
	if (p->multi_pass)
		return p->scoring ? "multi-pass scoring" : "multi-pass";
	return p->scoring ? "scoring" : "pass-fail";
}

static void note(struct verify_ctx *v, const char *kind, const struct problem *p, const char *fmt,
		 ...) __attribute__((format(printf, 4, 5)));

/* A "note" or "warn" line, also kept in the report's notes. */
static void note(struct verify_ctx *v, const char *kind, const struct problem *p, const char *fmt,
		 ...)
{
	struct strbuf sb = STRBUF_INIT;
	va_list ap;
	va_start(ap, fmt);
	strbuf_vaddf(&sb, fmt, ap);
	va_end(ap);
	cJSON_AddItemToArray(v->notes, cJSON_CreateString(sb.buf));
	say(v, "%s %s: %s", kind, p->id, sb.buf);
	strbuf_release(&sb);
}

/* The package as a whole failed (why): a FAIL line, counted, and the report's error. */
static void fail_package(struct verify_ctx *v, cJSON *rep, const struct problem *p, const char *why)
{
	v->n.failed++;
	say(v, "FAIL %s: %s", p->id, why);
	cJSON_DeleteItemFromObjectCaseSensitive(rep, "error");
	cJSON_AddStringToObject(rep, "error", why);
}

/* Runs both passes (see verify.h) into rep. */
static void verify_runs(struct verify_ctx *v, cJSON *rep, const struct problem *p,
			struct checker *chk)
{
	const struct verify_opts *o = v->o;
	int nac = 0;
	for (int i = 0; i < p->nsubs; i++) {
		struct expect x;
		char why[256];
		nac += expect_of(p, &p->subs[i], &x, why, sizeof why) &&
		       x.e.final == BIT(SUB_ACCEPTED);
	}
	if (nac == 0 && !(p->nsubs == 0 && o->allow_no_submissions))
		/* the format requires one: it lower-bounds the time limit */
		fail_package(v, rep, p, "no submission under submissions/accepted/");
	else if (nac == 0)
		note(v, "note", p, "no example submissions to grade");
	bool legacy = p->format == PROB_LEGACY;
	double slowest = 0, limit_s = p->limits.time_limit_s, tle_s = 0;
	bool any_ac = false, inferred = limit_s <= 0;
	long probe =
	    o->cfg->max_time_limit_ms < PROBE_LIMIT_MS ? o->cfg->max_time_limit_ms : PROBE_LIMIT_MS;
	long first_ms = inferred ? probe : (long)(limit_s * 1000 + 0.5);
	run_pass(v, p, chk, true, first_ms, first_ms, &slowest, &any_ac);
	bool fallback = false;
	if (inferred) {
		if (!any_ac) {
			limit_s = o->cfg->time_limit_ms / 1000.0;
			fallback = true;
			note(v, "note", p,
			     "no accepted submission ran; time limit %.3g s (judge.ini)", limit_s);
		} else if (legacy) {
			problem_legacy_time_limit(&p->limits, slowest / 1000.0, &limit_s, &tle_s);
		} else if (problem_infer_time_limit(&p->limits, slowest / 1000.0, -1, &limit_s) <
			   0) {
			limit_s = o->cfg->time_limit_ms / 1000.0;
			fallback = true;
		}
	}
	if (tle_s <= 0)
		tle_s =
		    limit_s * (legacy ? p->limits.time_safety_margin : p->limits.time_limit_to_tle);
	if (!inferred && !legacy && any_ac &&
	    slowest / 1000.0 * p->limits.ac_to_time_limit > limit_s)
		note(v, "warn", p,
		     "slowest accepted %.0f ms x ac_to_time_limit %.3g exceeds the time limit %.3g "
		     "s",
		     slowest, p->limits.ac_to_time_limit, limit_s);
	say(v,
	    "time %s: limit %.3g s%s (slowest accepted %.0f ms), the others run at %.3g s "
	    "(a verdict there or at the limit counts)",
	    p->id, limit_s,
	    inferred ? (legacy ? " inferred (legacy rules)" : " inferred (2025-09 rules)") : "",
	    slowest, tle_s);
	cJSON_AddNumberToObject(rep, "time_limit_ms", (double)(long)(limit_s * 1000 + 0.5));
	/* inferred from the accepted submissions: the grader applies it (a limit
	 * that is only judge.ini's default is left to the grader's own rules) */
	cJSON_AddBoolToObject(rep, "time_limit_inferred", inferred && !fallback);
	cJSON_AddNumberToObject(rep, "slowest_accepted_ms", slowest);
	cJSON_AddNumberToObject(rep, "tle_checked_ms", (double)(long)(tle_s * 1000 + 0.5));
	run_pass(v, p, chk, false, (long)(limit_s * 1000 + 0.5), (long)(tle_s * 1000 + 0.5),
		 &slowest, &any_ac);
}

cJSON *verify_problem(const struct verify_opts *o, const struct problem *p, struct verify_counts *n)
{
	struct verify_ctx v = {.o = o};
	char err[1024];
	cJSON *rep = cJSON_CreateObject();
	cJSON_AddStringToObject(rep, "problem", p->id);
	cJSON_AddStringToObject(rep, "name", p->name ? p->name : p->id);
	cJSON_AddStringToObject(rep, "format_version", p->format_version);
	cJSON_AddStringToObject(rep, "kind", kind_of(p));
	cJSON_AddNumberToObject(rep, "tests", p->ntests);
	cJSON_AddNullToObject(rep, "error");
	v.notes = cJSON_CreateArray();
	v.subs = cJSON_CreateArray();
	say(&v, "---- %s (%s, format %s, %s, %d tests, %d submissions%s)", p->id, p->name,
	    p->format_version, kind_of(p), p->ntests, p->nsubs,
	    p->custom_validator ? ", custom output validator" : "");
	bool gradable = true;
	struct checker *chk = NULL;
	if (p->unsupported) {
		gradable = false;
		cJSON_DeleteItemFromObjectCaseSensitive(rep, "error");
		cJSON_AddStringToObject(rep, "error", p->unsupported);
		skip_all(&v, p, p->unsupported);
	} else if (p->custom_validator && checker_build(p, o->langs, o->cfg, o->backend,
							o->first_slot, &chk, err, sizeof err) < 0) {
		gradable = false;
		fail_package(&v, rep, p, err);
	} else {
		verify_runs(&v, rep, p, chk);
	}
	checker_close(chk);
	if (cancelled(o) && gradable) {
		fail_package(&v, rep, p, "verification stopped");
	}
	cJSON_AddBoolToObject(rep, "ok", v.n.failed == 0 && gradable);
	cJSON_AddBoolToObject(rep, "gradable", gradable);
	cJSON_AddNumberToObject(rep, "passed", v.n.passed);
	cJSON_AddNumberToObject(rep, "failed", v.n.failed);
	cJSON_AddNumberToObject(rep, "skipped", v.n.skipped);
	cJSON_AddItemToObject(rep, "notes", v.notes);
	cJSON_AddItemToObject(rep, "submissions", v.subs);
	n->passed += v.n.passed;
	n->failed += v.n.failed;
	n->skipped += v.n.skipped;
	return rep;
}
