/* judge0_render: Judge0 CE's status ids and submission JSON. */
#include "judge/api/judge0_render.h"

#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "common/base64.h"
#include "common/strbuf.h"
#include "judge/grading/lang.h"
#include "judge/service/queue.h"

static const char *const status_names[] = {
    NULL,
    "In Queue",
    "Processing",
    "Accepted",
    "Wrong Answer",
    "Time Limit Exceeded",
    "Compilation Error",
    "Runtime Error (SIGSEGV)",
    "Runtime Error (SIGXFSZ)",
    "Runtime Error (SIGFPE)",
    "Runtime Error (SIGABRT)",
    "Runtime Error (NZEC)",
    "Runtime Error (Other)",
    "Internal Error",
    "Exec Format Error",
};

const char *judge0_render_status_name(int id)
{
	return id >= 1 && id <= 14 ? status_names[id] : NULL;
}

static long num(const cJSON *o, const char *key, long dflt)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
	return cJSON_IsNumber(v) ? (long)v->valuedouble : dflt;
}

/* Judge0 names a runtime error by the signal that ended the program
 * (Status.find_runtime_error_by_status_code) or, without one, NZEC. */
static int runtime_error_id(const cJSON *res)
{
	long sig = num(res, "signal", 0);
	switch (sig) {
	case 0:
		return 11;
	case SIGSEGV:
		return 7;
	case SIGXFSZ:
		return 8;
	case SIGFPE:
		return 9;
	case SIGABRT:
		return 10;
	default:
		return 12;
	}
}

int judge0_render_status_id(const struct queue_sub *s)
{
	switch (s->status) {
	case SUB_QUEUED:
		return 1;
	case SUB_RUNNING:
		return 2;
	case SUB_COMPLETED:
	case SUB_ACCEPTED:
		return 3;
	case SUB_WRONG_ANSWER:
		return 4;
	case SUB_TIMEOUT:
		return 5;
	case SUB_COMPILE_ERROR:
		return 6;
	case SUB_RUNTIME_ERROR:
		return runtime_error_id(s->result);
	case SUB_MEMORY_LIMIT:
		return 12;
	case SUB_OUTPUT_LIMIT:
		return 8;
	default:
		return 13;
	}
}

/* ---- attributes ---- */

enum attr {
	A_SOURCE_CODE,
	A_LANGUAGE_ID,
	A_STDIN,
	A_EXPECTED_OUTPUT,
	A_STDOUT,
	A_STATUS_ID,
	A_CREATED_AT,
	A_FINISHED_AT,
	A_TIME,
	A_MEMORY,
	A_STDERR,
	A_TOKEN,
	A_NUMBER_OF_RUNS,
	A_CPU_TIME_LIMIT,
	A_CPU_EXTRA_TIME,
	A_WALL_TIME_LIMIT,
	A_MEMORY_LIMIT,
	A_STACK_LIMIT,
	A_MAX_PROCESSES,
	A_PER_PROCESS_TIME,
	A_PER_PROCESS_MEMORY,
	A_MAX_FILE_SIZE,
	A_COMPILE_OUTPUT,
	A_EXIT_CODE,
	A_EXIT_SIGNAL,
	A_MESSAGE,
	A_WALL_TIME,
	A_COMPILER_OPTIONS,
	A_COMMAND_LINE_ARGUMENTS,
	A_REDIRECT_STDERR,
	A_CALLBACK_URL,
	A_ADDITIONAL_FILES,
	A_ENABLE_NETWORK,
	A_STATUS,
	A_LANGUAGE,
	A_COUNT
};

/* Judge0's attribute names, in the order its serializer writes them. */
static const char *const attr_names[A_COUNT] = {
    "source_code",
    "language_id",
    "stdin",
    "expected_output",
    "stdout",
    "status_id",
    "created_at",
    "finished_at",
    "time",
    "memory",
    "stderr",
    "token",
    "number_of_runs",
    "cpu_time_limit",
    "cpu_extra_time",
    "wall_time_limit",
    "memory_limit",
    "stack_limit",
    "max_processes_and_or_threads",
    "enable_per_process_and_thread_time_limit",
    "enable_per_process_and_thread_memory_limit",
    "max_file_size",
    "compile_output",
    "exit_code",
    "exit_signal",
    "message",
    "wall_time",
    "compiler_options",
    "command_line_arguments",
    "redirect_stderr_to_stdout",
    "callback_url",
    "additional_files",
    "enable_network",
    "status",
    "language",
};

#define BIT(a) ((j0r_fields)1 << (a))

int judge0_render_fields_parse(const char *fields, j0r_fields *out, char *bad, size_t badlen)
{
	if (!fields) {
		*out = BIT(A_STDOUT) | BIT(A_TIME) | BIT(A_MEMORY) | BIT(A_STDERR) | BIT(A_TOKEN) |
		       BIT(A_COMPILE_OUTPUT) | BIT(A_MESSAGE) | BIT(A_STATUS);
		return 0;
	}
	*out = 0;
	const char *p = fields;
	while (*p) {
		size_t n = strcspn(p, ",");
		/* Judge0 trims each name */
		const char *w = p;
		size_t wn = n;
		while (wn && *w == ' ')
			w++, wn--;
		while (wn && w[wn - 1] == ' ')
			wn--;
		if (wn == 1 && *w == '*') {
			*out |= BIT(A_COUNT) - 1;
		} else if (wn) {
			int a = 0;
			while (a < A_COUNT &&
			       !(strlen(attr_names[a]) == wn && !strncmp(attr_names[a], w, wn)))
				a++;
			if (a == A_COUNT) {
				snprintf(bad, badlen, "%.*s", (int)(wn > 64 ? 64 : wn), w);
				return -1;
			}
			*out |= BIT(a);
		}
		p += n + (p[n] == ',');
	}
	return 0;
}

/* ---- values ---- */

static const cJSON *item(const cJSON *o, const char *key)
{
	return cJSON_GetObjectItemCaseSensitive(o, key);
}

static const char *str(const cJSON *o, const char *key)
{
	const cJSON *v = item(o, key);
	return cJSON_IsString(v) ? v->valuestring : NULL;
}

/* A text attribute: null when absent or empty (as Judge0 gives empty output).
 * raw_b64 is the base64 of its raw bytes when they were not UTF-8 (model.c's
 * key_base64), else NULL. Returns false when the text is not UTF-8 and the
 * client did not ask for base64. */
static bool add_text(cJSON *o, const char *name, const char *text, const char *raw_b64, bool base64)
{
	if (!text || (!*text && !raw_b64)) {
		cJSON_AddNullToObject(o, name);
		return true;
	}
	if (!base64) {
		if (raw_b64)
			return false;
		cJSON_AddStringToObject(o, name, text);
		return true;
	}
	if (raw_b64) {
		cJSON_AddStringToObject(o, name, raw_b64);
		return true;
	}
	struct strbuf b = STRBUF_INIT;
	base64_encode(&b, text, strlen(text));
	cJSON_AddStringToObject(o, name, b.buf);
	strbuf_release(&b);
	return true;
}

/* ms as Judge0's seconds string ("0.013"), or null. */
static void add_seconds(cJSON *o, const char *name, const cJSON *ms)
{
	if (!cJSON_IsNumber(ms)) {
		cJSON_AddNullToObject(o, name);
		return;
	}
	char b[32];
	snprintf(b, sizeof b, "%.3f", ms->valuedouble / 1000.0);
	cJSON_AddStringToObject(o, name, b);
}

/* A Unix time in ms as Judge0's ISO 8601 UTC ("2024-05-01T10:00:00.123Z"). */
static void add_iso(cJSON *o, const char *name, int64_t ms)
{
	if (!ms) {
		cJSON_AddNullToObject(o, name);
		return;
	}
	time_t t = (time_t)(ms / 1000);
	struct tm tm;
	gmtime_r(&t, &tm);
	char b[48];
	snprintf(b, sizeof b, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900,
		 tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, (int)(ms % 1000));
	cJSON_AddStringToObject(o, name, b);
}

static void add_num_or_null(cJSON *o, const char *name, const cJSON *v)
{
	if (cJSON_IsNumber(v))
		cJSON_AddNumberToObject(o, name, v->valuedouble);
	else
		cJSON_AddNullToObject(o, name);
}

/* Judge0's message: what isolate said about the end of the run. */
static void add_message(cJSON *o, const struct queue_sub *s)
{
	const cJSON *res = s->result;
	char b[300];
	const char *m = NULL;
	switch (s->status) {
	case SUB_INTERNAL_ERROR:
	case SUB_CANCELLED: /* Judge0 has no such status: 13, with the reason */
		m = str(res, "message");
		break;
	case SUB_TIMEOUT:
		m = "Time limit exceeded";
		break;
	case SUB_MEMORY_LIMIT:
		m = "Memory limit exceeded";
		break;
	case SUB_OUTPUT_LIMIT:
		m = "Output limit exceeded";
		break;
	case SUB_RUNTIME_ERROR:
		if (num(res, "signal", 0))
			snprintf(b, sizeof b, "Caught fatal signal %ld", num(res, "signal", 0));
		else
			snprintf(b, sizeof b, "Exited with error status %ld",
				 num(res, "exit_code", 0));
		m = b;
		break;
	default:
		break;
	}
	if (m && *m)
		cJSON_AddStringToObject(o, "message", m);
	else
		cJSON_AddNullToObject(o, "message");
}

/* A limit of the request (limits.<key>, in unit per second or per KB) as
 * Judge0's number, or null when the request did not set it. */
static void add_limit(cJSON *o, const char *name, const cJSON *req, const char *key, double div)
{
	const cJSON *v = item(item(req, "limits"), key);
	if (cJSON_IsNumber(v))
		cJSON_AddNumberToObject(o, name, v->valuedouble / div);
	else
		cJSON_AddNullToObject(o, name);
}

static void add_status(cJSON *o, int id)
{
	cJSON *st = cJSON_AddObjectToObject(o, "status");
	cJSON_AddNumberToObject(st, "id", id);
	cJSON_AddStringToObject(st, "description", judge0_render_status_name(id));
}

/* The attributes that are fixed or echoed from the request. */
static void add_fixed(cJSON *o, int a, const struct queue_sub *s)
{
	const cJSON *req = s->request;
	switch (a) {
	case A_NUMBER_OF_RUNS:
		cJSON_AddNumberToObject(o, attr_names[a], 1);
		break;
	case A_CPU_TIME_LIMIT:
		add_limit(o, attr_names[a], req, "time_ms", 1000.0);
		break;
	case A_WALL_TIME_LIMIT:
		add_limit(o, attr_names[a], req, "wall_ms", 1000.0);
		break;
	case A_MEMORY_LIMIT:
		add_limit(o, attr_names[a], req, "memory_mb", 1.0 / 1024);
		break;
	case A_MAX_PROCESSES:
		add_limit(o, attr_names[a], req, "processes", 1.0);
		break;
	case A_PER_PROCESS_TIME:
	case A_PER_PROCESS_MEMORY:
	case A_REDIRECT_STDERR:
	case A_ENABLE_NETWORK:
		cJSON_AddFalseToObject(o, attr_names[a]);
		break;
	case A_CALLBACK_URL:
		if (s->callback_url)
			cJSON_AddStringToObject(o, attr_names[a], s->callback_url);
		else
			cJSON_AddNullToObject(o, attr_names[a]);
		break;
	default: /* cpu_extra_time, stack_limit, max_file_size, compiler options ... */
		cJSON_AddNullToObject(o, attr_names[a]);
	}
}

cJSON *judge0_render_submission(const struct queue_sub *s, const struct lang_registry *langs,
				j0r_fields fields, bool base64)
{
	cJSON *o = cJSON_CreateObject();
	const cJSON *req = s->request, *res = s->result, *comp = item(res, "compile");
	long lang_id = num(s->front, "language_id", 0);
	int sid = judge0_render_status_id(s);
	bool ran = item(res, "time_ms") != NULL;
	bool ok = true;
	for (int a = 0; a < A_COUNT && ok; a++) {
		if (!(fields & BIT(a)))
			continue;
		const char *n = attr_names[a];
		switch (a) {
		case A_SOURCE_CODE:
			ok = add_text(o, n, str(req, "source"), NULL, base64);
			break;
		case A_LANGUAGE_ID:
			cJSON_AddNumberToObject(o, n, (double)lang_id);
			break;
		case A_STDIN:
			ok = add_text(o, n, str(req, "stdin"), NULL, base64);
			break;
		case A_EXPECTED_OUTPUT:
			ok = add_text(o, n, str(req, "expected_output"), NULL, base64);
			break;
		case A_STDOUT:
			ok = add_text(o, n, str(res, "stdout"), str(res, "stdout_base64"), base64);
			break;
		case A_STDERR:
			ok = add_text(o, n, str(res, "stderr"), str(res, "stderr_base64"), base64);
			break;
		case A_COMPILE_OUTPUT:
			ok =
			    add_text(o, n, str(comp, "output"), str(comp, "output_base64"), base64);
			break;
		case A_STATUS_ID:
			cJSON_AddNumberToObject(o, n, sid);
			break;
		case A_STATUS:
			add_status(o, sid);
			break;
		case A_CREATED_AT:
			add_iso(o, n, s->created_ms);
			break;
		case A_FINISHED_AT:
			add_iso(o, n, s->finished_ms);
			break;
		case A_TIME:
			add_seconds(o, n, ran ? item(res, "time_ms") : NULL);
			break;
		case A_WALL_TIME:
			add_seconds(o, n, ran ? item(res, "wall_ms") : NULL);
			break;
		case A_MEMORY:
			add_num_or_null(o, n, ran ? item(res, "memory_kb") : NULL);
			break;
		case A_EXIT_CODE:
			add_num_or_null(o, n, item(res, "exit_code"));
			break;
		case A_EXIT_SIGNAL:
			add_num_or_null(o, n, item(res, "signal"));
			break;
		case A_TOKEN:
			cJSON_AddStringToObject(o, n, s->token);
			break;
		case A_MESSAGE:
			add_message(o, s);
			break;
		case A_LANGUAGE: {
			const struct lang *l = langs ? lang_by_judge0(langs, lang_id) : NULL;
			cJSON *lj = cJSON_AddObjectToObject(o, n);
			cJSON_AddNumberToObject(lj, "id", (double)lang_id);
			cJSON_AddStringToObject(lj, "name", l ? l->judge0_name : "");
			break;
		}
		default:
			add_fixed(o, a, s);
		}
	}
	if (!ok) {
		cJSON_Delete(o);
		return NULL;
	}
	return o;
}
