/* cmd_problems: `judge problems add|list|show|publish|unpublish|rm`: a running
 * judge's problems through its HTTP API (judge/api/problems.h): add zips a
 * package folder (package.h's checks and caps: no link, no file past the cap
 * read) or sends a zip as it is, and prints the verification report as
 * `judge verify` prints its lines. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cjson/cJSON.h>

#include "common/config.h"
#include "common/strbuf.h"
#include "common/xalloc.h"
#include "common/zipfiles.h"
#include "judge/cli/client.h"
#include "judge/cli/cmd.h"
#include "judge/grading/package.h"
#include "judge/grading/problem.h"

static const char usage_text[] =
    "usage: judge problems COMMAND [options]\n"
    "  add [--id ID] [--public] [--keep] [--replace] [--wait S] DIR|ZIP\n"
    "                   upload a problem package (a folder is zipped): the judge checks\n"
    "                   it and grades its example submissions; prints the report.\n"
    "                   --replace adds a version to your problem ID (PUT); --keep stores\n"
    "                   it even when its submissions do not get their verdicts\n"
    "  list             the problems this key may see\n"
    "  show ID [--version N]   one problem as JSON (statement, samples, report)\n"
    "  publish ID | unpublish ID   make it public (every key may solve it) or private\n"
    "  rm ID            retire it (old submissions keep their results)\n"
    "options: --url URL (default http://LISTEN of judge.ini), --key KEY (default\n"
    "$JUDGE_API_KEY, else state_dir/api-key), --json (print the answer as it is)\n"
    "Exit: 0 done, 1 refused or an error, 2 usage, 3 still being verified.\n";

struct opts {
	const char *url, *key, *id, *version;
	bool public_, keep, replace, json;
	long wait_s;
};

struct client {
	char *base, *auth;
	bool json;
};

/* Prints an error answer. Returns 1. */
static int print_error(long status, const struct strbuf *body)
{
	cJSON *j = cJSON_ParseWithLength(body->buf ? body->buf : "", body->len);
	const cJSON *e = cJSON_GetObjectItemCaseSensitive(j, "error");
	const char *code = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(e, "code"));
	const char *msg = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(e, "message"));
	if (code && msg)
		fprintf(stderr, "judge problems: %s (%ld): %s\n", code, status, msg);
	else
		fprintf(stderr, "judge problems: HTTP %ld: %.300s\n", status,
			body->buf ? body->buf : "");
	cJSON_Delete(j);
	return 1;
}

/* Sends a request; on success (2xx) *out holds the parsed answer. Returns the
 * status, or -1 after printing why. */
static long call(const struct client *c, const char *method, const char *path, const char *ctype,
		 const void *body, size_t len, long timeout_s, cJSON **out, struct strbuf *raw)
{
	char err[512];
	char *url = xasprintf("%s%s", c->base, path);
	long st =
	    client_request(method, url, c->auth, ctype, body, len, timeout_s, raw, err, sizeof err);
	free(url);
	if (st < 0) {
		fprintf(stderr, "judge problems: %s\n", err);
		return -1;
	}
	*out = cJSON_ParseWithLength(raw->buf ? raw->buf : "", raw->len);
	return st;
}

/* The report's lines, as `judge verify` prints them. */
static void print_report(const char *id, const cJSON *p)
{
	const cJSON *rep = cJSON_GetObjectItemCaseSensitive(
	    cJSON_GetObjectItemCaseSensitive(p, "verification"), "report");
	const cJSON *s;
	cJSON_ArrayForEach(s, cJSON_GetObjectItemCaseSensitive(rep, "submissions"))
	{
		const char *o =
		    cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(s, "outcome"));
		const char *path =
		    cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(s, "path"));
		const char *lang =
		    cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(s, "language"));
		const char *st =
		    cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(s, "status"));
		const char *msg =
		    cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(s, "message"));
		const cJSON *ms = cJSON_GetObjectItemCaseSensitive(s, "time_ms");
		if (!o || !path)
			continue;
		if (!strcmp(o, "ok"))
			printf("ok   %s %s (%s): %s, %.0f ms\n", id, path, lang ? lang : "?",
			       st ? st : "?", cJSON_IsNumber(ms) ? ms->valuedouble : 0);
		else if (!strcmp(o, "fail"))
			printf("FAIL %s %s (%s): %s\n", id, path, lang ? lang : "?",
			       msg ? msg : "?");
		else
			printf("skip %s %s: %s\n", id, path, msg ? msg : "?");
	}
	const cJSON *note;
	cJSON_ArrayForEach(note,
			   cJSON_GetObjectItemCaseSensitive(rep, "notes")) if (cJSON_IsString(note))
	    printf("note %s: %s\n", id, note->valuestring);
	const char *err = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(rep, "error"));
	if (err)
		printf("FAIL %s: %s\n", id, err);
}

/* The zip of a package: the file as it is, or the folder zipped. Returns 0
 * or -1 after printing why. */
static int package_zip(const struct judge_config *cfg, const char *path, struct strbuf *zip)
{
	char err[1024];
	struct stat st;
	size_t cap = (size_t)cfg->problem_max_mb << 20;
	if (stat(path, &st) < 0) {
		fprintf(stderr, "judge problems: cannot read '%s': %s\n", path, strerror(errno));
		return -1;
	}
	if (!S_ISDIR(st.st_mode)) {
		int rc = strbuf_read_file(zip, path, cap);
		if (rc < 0) {
			fprintf(stderr, "judge problems: cannot read '%s': %s\n", path,
				rc == -EFBIG ? "larger than problem_max_mb" : strerror(-rc));
			return -1;
		}
		return 0;
	}
	struct package pk;
	struct package_caps caps = {.max_files = (int)cfg->problem_max_files,
				    .max_bytes = (int64_t)cap};
	if (package_from_dir(&pk, path, &caps, err, sizeof err) < 0) {
		fprintf(stderr, "judge problems: '%s': %s\n", path, err);
		return -1;
	}
	char **names = xcalloc((size_t)pk.nfiles + 1, sizeof *names);
	for (int i = 0; i < pk.nfiles; i++)
		names[i] = pk.files[i].path;
	int rc = zipfiles_write(zip, path, names, pk.nfiles, cap, err, sizeof err);
	if (rc < 0)
		fprintf(stderr, "judge problems: '%s': %s\n", path, err);
	free(names);
	package_release(&pk);
	return rc;
}

/* The id of a package path: its folder's (or zip's, without .zip) name when
 * that is an id; else NULL (the server reads it from the zip's folder). */
static char *id_of(const char *path)
{
	size_t n = strlen(path);
	while (n > 1 && path[n - 1] == '/')
		n--;
	char *copy = xstrndup(path, n);
	const char *base = strrchr(copy, '/');
	char *id = xstrdup(base ? base + 1 : copy);
	free(copy);
	size_t l = strlen(id);
	if (l > 4 && !strcmp(id + l - 4, ".zip"))
		id[l - 4] = 0;
	if (!problem_id_valid(id)) {
		free(id);
		return NULL;
	}
	return id;
}

static int cmd_add(const struct client *c, const struct judge_config *cfg, const struct opts *o,
		   const char *path)
{
	struct strbuf zip = STRBUF_INIT, q = STRBUF_INIT, raw = STRBUF_INIT;
	cJSON *ans = NULL;
	int ret = 1;
	char *id = o->id ? xstrdup(o->id) : id_of(path);
	if (o->replace && !id) {
		fprintf(stderr, "judge problems: --replace needs the problem's id (--id)\n");
		ret = 2;
		goto out;
	}
	if (package_zip(cfg, path, &zip) < 0)
		goto out;
	if (o->replace)
		strbuf_addf(&q, "/v1/problems/%s?", id);
	else if (id)
		strbuf_addf(&q, "/v1/problems?id=%s&", id);
	else
		strbuf_addstr(&q, "/v1/problems?");
	strbuf_addf(&q, "wait=%ld%s%s", o->wait_s, o->public_ ? "&visibility=public" : "",
		    o->keep ? "&keep=true" : "");
	long st = call(c, o->replace ? "PUT" : "POST", q.buf, "application/zip", zip.buf, zip.len,
		       o->wait_s + 60, &ans, &raw);
	if (st < 0)
		goto out;
	if (c->json)
		printf("%s\n", raw.buf ? raw.buf : "");
	/* a refusal carries the problem beside its error */
	const cJSON *p = st == 422 ? cJSON_GetObjectItemCaseSensitive(ans, "problem") : ans;
	if (st >= 400 && !p) {
		if (!c->json)
			print_error(st, &raw);
		goto out;
	}
	const char *pid = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(p, "id"));
	const char *state = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(p, "status"));
	const cJSON *ver = cJSON_GetObjectItemCaseSensitive(p, "version");
	const cJSON *rep = cJSON_GetObjectItemCaseSensitive(
	    cJSON_GetObjectItemCaseSensitive(p, "verification"), "report");
	if (!c->json) {
		print_report(pid ? pid : "?", p);
		printf("problem %s version %.0f: %s", pid ? pid : "?",
		       cJSON_IsNumber(ver) ? ver->valuedouble : 0, state ? state : "?");
		if (cJSON_IsObject(rep))
			printf(" (%d passed, %d failed, %d skipped)",
			       cJSON_GetObjectItemCaseSensitive(rep, "passed")->valueint,
			       cJSON_GetObjectItemCaseSensitive(rep, "failed")->valueint,
			       cJSON_GetObjectItemCaseSensitive(rep, "skipped")->valueint);
		printf("\n");
		if (st == 422)
			print_error(st, &raw);
		if (st == 202)
			printf("still being verified: judge problems show %s\n", pid ? pid : "ID");
	}
	ret = st == 202 ? 3 : st < 300 ? 0 : 1;
out:
	free(id);
	cJSON_Delete(ans);
	strbuf_release(&zip);
	strbuf_release(&q);
	strbuf_release(&raw);
	return ret;
}

static int cmd_list(const struct client *c)
{
	struct strbuf raw = STRBUF_INIT;
	cJSON *ans = NULL;
	long st = call(c, "GET", "/v1/problems", NULL, NULL, 0, 60, &ans, &raw);
	int ret = 1;
	if (st >= 0 && (st >= 300 || c->json)) {
		if (st >= 300)
			print_error(st, &raw);
		else
			printf("%s\n", raw.buf);
		ret = st >= 300;
		goto out;
	}
	if (st < 0)
		goto out;
	printf("%-24s %-8s %-8s %-4s %s\n", "ID", "VERSION", "VISIBLE", "MINE", "NAME");
	const cJSON *p;
	cJSON_ArrayForEach(p, cJSON_GetObjectItemCaseSensitive(ans, "problems"))
	{
		const cJSON *v = cJSON_GetObjectItemCaseSensitive(p, "version");
		char vs[16] = "-";
		if (cJSON_IsNumber(v))
			snprintf(vs, sizeof vs, "%d", v->valueint);
		printf("%-24s %-8s %-8s %-4s %s\n",
		       cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(p, "id")), vs,
		       cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(p, "visibility")),
		       cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(p, "mine")) ? "yes" : "no",
		       cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(p, "name")));
	}
	ret = 0;
out:
	cJSON_Delete(ans);
	strbuf_release(&raw);
	return ret;
}

/* show, publish, unpublish, rm: one request, the answer printed as JSON. */
static int cmd_one(const struct client *c, const char *cmd, const char *id, const char *version)
{
	struct strbuf raw = STRBUF_INIT, path = STRBUF_INIT;
	cJSON *ans = NULL;
	const char *method = "GET", *body = NULL;
	if (!problem_id_valid(id)) {
		fprintf(stderr, "judge problems: '%s' is not a problem id\n", id);
		return 2;
	}
	strbuf_addf(&path, "/v1/problems/%s", id);
	if (!strcmp(cmd, "show") && version)
		strbuf_addf(&path, "?version=%s", version);
	if (!strcmp(cmd, "publish") || !strcmp(cmd, "unpublish")) {
		method = "PATCH";
		body =
		    cmd[0] == 'p' ? "{\"visibility\":\"public\"}" : "{\"visibility\":\"private\"}";
	} else if (!strcmp(cmd, "rm")) {
		method = "DELETE";
	}
	long st = call(c, method, path.buf, body ? "application/json" : NULL, body,
		       body ? strlen(body) : 0, 60, &ans, &raw);
	int ret = 1;
	if (st >= 300)
		print_error(st, &raw);
	else if (st >= 0) {
		char *text = ans && !c->json ? cJSON_Print(ans) : NULL;
		printf("%s\n", text ? text : raw.buf);
		free(text);
		ret = 0;
	}
	cJSON_Delete(ans);
	strbuf_release(&raw);
	strbuf_release(&path);
	return ret;
}

int cmd_problems(int argc, char **argv, struct judge_config *cfg)
{
	enum {
		O_URL = 1,
		O_KEY,
		O_ID,
		O_PUBLIC,
		O_KEEP,
		O_REPLACE,
		O_WAIT,
		O_JSON,
		O_VERSION,
		O_HELP
	};
	static const struct option opts[] = {{"url", required_argument, 0, O_URL},
					     {"key", required_argument, 0, O_KEY},
					     {"id", required_argument, 0, O_ID},
					     {"public", no_argument, 0, O_PUBLIC},
					     {"keep", no_argument, 0, O_KEEP},
					     {"replace", no_argument, 0, O_REPLACE},
					     {"wait", required_argument, 0, O_WAIT},
					     {"json", no_argument, 0, O_JSON},
					     {"version", required_argument, 0, O_VERSION},
					     {"help", no_argument, 0, O_HELP},
					     {0, 0, 0, 0}};
	struct opts o = {.wait_s = cfg->max_wait_s};
	if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		fputs(usage_text, argc < 2 ? stderr : stdout);
		return argc < 2 ? 2 : 0;
	}
	const char *cmd = argv[1];
	int c;
	optind = 2;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case O_URL:
			o.url = optarg;
			break;
		case O_KEY:
			o.key = optarg;
			break;
		case O_ID:
			o.id = optarg;
			break;
		case O_PUBLIC:
			o.public_ = true;
			break;
		case O_KEEP:
			o.keep = true;
			break;
		case O_REPLACE:
			o.replace = true;
			break;
		case O_JSON:
			o.json = true;
			break;
		case O_VERSION:
			o.version = optarg;
			break;
		case O_WAIT: {
			char *end;
			o.wait_s = strtol(optarg, &end, 10);
			if (*end || end == optarg || o.wait_s < 0 || o.wait_s > 86400) {
				fprintf(stderr,
					"judge problems: --wait needs seconds (0 to 86400)\n");
				return 2;
			}
			break;
		}
		case O_HELP:
			fputs(usage_text, stdout);
			return 0;
		default:
			fprintf(stderr, "judge problems: unknown or incomplete option '%s'\n%s",
				argv[optind - 1], usage_text);
			return 2;
		}
	}
	int nargs = argc - optind;
	bool add = !strcmp(cmd, "add"), list = !strcmp(cmd, "list");
	bool one = !strcmp(cmd, "show") || !strcmp(cmd, "publish") || !strcmp(cmd, "unpublish") ||
		   !strcmp(cmd, "rm");
	if (!(add || list || one) || nargs != (list ? 0 : 1)) {
		fprintf(stderr, "judge problems: %s\n%s",
			add || list || one ? "wrong number of arguments" : "unknown command",
			usage_text);
		return 2;
	}
	struct client cl = {.base = client_base_url(cfg, o.url),
			    .auth = client_auth_header(cfg, o.key),
			    .json = o.json};
	int ret = add	 ? cmd_add(&cl, cfg, &o, argv[optind])
		  : list ? cmd_list(&cl)
			 : cmd_one(&cl, cmd, argv[optind], o.version);
	free(cl.base);
	free(cl.auth);
	return ret;
}
