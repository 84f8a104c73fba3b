/* e2b_control: E2B's /sandboxes routes, rendered from the session endpoints' answers. */
#include "judge/api/e2b_control.h"

#include <cjson/cJSON.h>
#include <ctype.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/clock.h"
#include "common/config.h"
#include "common/xalloc.h"
#include "judge/api/api.h"
#include "judge/api/e2b_access.h"
#include "judge/api/http.h"
#include "judge/api/sessions.h"
#include "judge/grading/lang.h"
#include "judge/service/session/sesscall.h"
#include "judge/service/session/sessnet.h"
#include "judge/service/session/sessreq.h"

/* What a control-plane request asks (the transform renders by it). */
enum op {
	OP_CREATE,   /* POST /sandboxes, /v2/sandboxes */
	OP_LIST,     /* GET /sandboxes, /v2/sandboxes */
	OP_INFO,     /* GET /sandboxes/{id} */
	OP_CONNECT,  /* POST [/v2]/sandboxes/{id}/connect */
	OP_KILL,     /* DELETE /sandboxes/{id} */
	OP_TIMEOUT,  /* POST /sandboxes/{id}/timeout */
	OP_METRICS,  /* GET /sandboxes/{id}/metrics */
	OP_PAUSE,    /* POST /sandboxes/{id}/pause */
	OP_SNAPSHOT, /* POST /sandboxes/{id}/snapshots */
};

struct ectx {
	enum op op;
	bool auth_on;
	char token[160];    /* the sandbox's access tokens ("" = none): its secret
			       (e2b_access.h), or the caller's key for one made before */
	cJSON *metadata;    /* list: the pairs a sandbox must hold (?metadata=), NULL = any */
	int64_t start, end; /* metrics: the window asked for, Unix seconds (0 = open) */
	bool list_running, list_paused; /* list: the states asked for (?state=, both by default) */
};

void e2b_control_message(const char *body, struct strbuf *out)
{
	cJSON *j = cJSON_Parse(body ? body : "");
	const cJSON *m = cJSON_GetObjectItemCaseSensitive(
	    cJSON_GetObjectItemCaseSensitive(j, "error"), "message");
	strbuf_addstr(out, cJSON_IsString(m) ? m->valuestring : body ? body : "");
	cJSON_Delete(j);
}

void e2b_control_error(struct strbuf *out, int status, const char *message)
{
	cJSON *o = cJSON_CreateObject();
	cJSON_AddNumberToObject(o, "code", status);
	cJSON_AddStringToObject(o, "message", message);
	char *s = cJSON_PrintUnformatted(o);
	strbuf_addstr(out, s);
	free(s);
	cJSON_Delete(o);
}

/* E2B's status for a /v1 error status: an ended or unknown session is not
 * found; a refused body is a bad request; the rest stay. */
static int error_status(int status)
{
	if (status == 410)
		return 404;
	if (status == 422 || status == 415)
		return 400;
	return status;
}

static const char *str(const cJSON *o, const char *name)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, name);
	return cJSON_IsString(v) ? v->valuestring : "";
}

static double num(const cJSON *o, const char *name)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, name);
	return cJSON_IsNumber(v) ? v->valuedouble : 0;
}

/* True when session s (its /v1 JSON) takes calls: E2B's "running". */
static bool running(const cJSON *s)
{
	const char *st = str(s, "status");
	return !strcmp(st, "ready") || !strcmp(st, "starting");
}

/* True when session s is paused: E2B's "paused" (connect resumes it). */
static bool paused(const cJSON *s)
{
	return !strcmp(str(s, "status"), "paused");
}

/* The sandbox of create and connect (Sandbox in E2B's OpenAPI). */
static cJSON *sandbox_json(const struct ectx *c, const cJSON *s)
{
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "sandboxID", str(s, "id"));
	cJSON_AddStringToObject(o, "templateID", E2B_TEMPLATE);
	cJSON_AddStringToObject(o, "alias", E2B_TEMPLATE);
	cJSON_AddStringToObject(o, "clientID", "judge");
	cJSON_AddStringToObject(o, "envdVersion", E2B_ENVD_VERSION);
	if (c->token[0]) {
		cJSON_AddStringToObject(o, "envdAccessToken", c->token);
		cJSON_AddStringToObject(o, "trafficAccessToken", c->token);
	} else {
		cJSON_AddNullToObject(o, "trafficAccessToken");
	}
	cJSON_AddNullToObject(o, "domain");
	return o;
}

/* The session's CPU quota as E2B's whole cpuCount (at least 1). */
static int cpu_count(const cJSON *lim)
{
	double cpus = num(lim, "cpus");
	return cpus > 1 ? (int)ceil(cpus) : 1;
}

/* GET /sandboxes/{id}/metrics: the session's last usage reading as one
 * SandboxMetric (the judge keeps no series), in [start, end] when the caller
 * gave them (Unix seconds); [] before the first reading. */
static cJSON *metrics_json(const struct ectx *c, const cJSON *s)
{
	cJSON *arr = cJSON_CreateArray();
	const cJSON *u = cJSON_GetObjectItemCaseSensitive(s, "usage");
	const cJSON *lim = cJSON_GetObjectItemCaseSensitive(s, "limits");
	if (!cJSON_IsObject(u))
		return arr;
	int64_t at = (int64_t)num(u, "sampled_at_ms");
	if ((c->start && at / 1000 < c->start) || (c->end && at / 1000 > c->end))
		return arr;
	char ts[32];
	clock_rfc3339_ms(at, ts);
	cJSON *m = cJSON_CreateObject();
	cJSON_AddStringToObject(m, "timestamp", ts);
	cJSON_AddNumberToObject(m, "timestampUnix", (double)(at / 1000));
	cJSON_AddNumberToObject(m, "cpuCount", cpu_count(lim));
	cJSON_AddNumberToObject(m, "cpuUsedPct", num(u, "cpu_pct"));
	cJSON_AddNumberToObject(m, "memUsed", num(u, "memory_kb") * 1024);
	cJSON_AddNumberToObject(m, "memTotal", num(lim, "memory_mb") * 1048576);
	cJSON_AddNumberToObject(m, "memCache", 0);
	cJSON_AddNumberToObject(m, "diskUsed", num(u, "disk_kb") * 1024);
	cJSON_AddNumberToObject(m, "diskTotal", num(lim, "disk_mb") * 1048576);
	cJSON_AddItemToArray(arr, m);
	return arr;
}

/* A sandbox as get-info and list show it (SandboxDetail, ListedSandbox). */
static cJSON *detail_json(const cJSON *s)
{
	const cJSON *lim = cJSON_GetObjectItemCaseSensitive(s, "limits");
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "templateID", E2B_TEMPLATE);
	cJSON_AddStringToObject(o, "alias", E2B_TEMPLATE);
	cJSON_AddStringToObject(o, "sandboxID", str(s, "id"));
	cJSON_AddStringToObject(o, "clientID", "judge");
	cJSON_AddStringToObject(o, "startedAt", str(s, "created_at"));
	cJSON_AddStringToObject(o, "endAt", str(s, "expires_at"));
	cJSON_AddStringToObject(o, "envdVersion", E2B_ENVD_VERSION);
	cJSON_AddNumberToObject(o, "cpuCount", cpu_count(lim));
	cJSON_AddNumberToObject(o, "memoryMB", num(lim, "memory_mb"));
	cJSON_AddNumberToObject(o, "diskSizeMB", num(lim, "disk_mb"));
	cJSON_AddStringToObject(o, "state", paused(s) ? "paused" : "running");
	const cJSON *meta = cJSON_GetObjectItemCaseSensitive(s, "metadata");
	cJSON_AddItemToObject(o, "metadata",
			      cJSON_IsObject(meta) ? cJSON_Duplicate(meta, true)
						   : cJSON_CreateObject());
	/* onTimeout pause: an idle session pauses (idle_action); any call on a
	 * paused one resumes it, which is E2B's autoResume */
	bool pause = !strcmp(str(s, "idle_action"), "pause");
	cJSON *life = cJSON_AddObjectToObject(o, "lifecycle");
	cJSON_AddStringToObject(life, "onTimeout", pause ? "pause" : "kill");
	cJSON_AddBoolToObject(life, "autoResume", pause);
	/* the egress policy in E2B's words: an allowlist is its allowOut with
	 * all other traffic denied */
	const cJSON *net = cJSON_GetObjectItemCaseSensitive(s, "network");
	cJSON_AddBoolToObject(o, "allowInternetAccess", !strcmp(str(net, "mode"), "open"));
	if (!strcmp(str(net, "mode"), "allowlist")) {
		cJSON *n = cJSON_AddObjectToObject(o, "network");
		cJSON_AddItemToObject(
		    n, "allowOut",
		    cJSON_Duplicate(cJSON_GetObjectItemCaseSensitive(net, "allow"), true));
		cJSON_AddItemToArray(cJSON_AddArrayToObject(n, "denyOut"),
				     cJSON_CreateString(E2B_ALL_TRAFFIC));
	}
	return o;
}

/* network.allowOut's entries as rules into *rules (an array it makes);
 * *all when one is ALL_TRAFFIC. Returns 0, or -1 with err. */
static int allow_out(const cJSON *list, cJSON **rules, bool *all, char *err, size_t errlen)
{
	const cJSON *it;
	if (!cJSON_IsArray(list)) {
		snprintf(err, errlen, "network.allowOut must be a list of host names");
		return -1;
	}
	*rules = cJSON_CreateArray();
	cJSON_ArrayForEach(it, list)
	{
		struct sessnet_rule rule;
		char e[200];
		if (!cJSON_IsString(it)) {
			snprintf(err, errlen, "network.allowOut: each entry is a string");
			return -1;
		}
		if (!strcmp(it->valuestring, E2B_ALL_TRAFFIC)) {
			*all = true;
			continue;
		}
		/* the proxy resolves names and refuses private addresses after
		 * resolution: an address or a CIDR would go around that */
		if (strchr(it->valuestring, '/') ||
		    sessnet_rule_parse(it->valuestring, &rule, e, sizeof e) < 0) {
			snprintf(err, errlen,
				 "network.allowOut: '%.100s' cannot be mapped: this judge allows "
				 "host names only (host, *.domain, host:port), not addresses or "
				 "CIDRs",
				 it->valuestring);
			return -1;
		}
		cJSON_AddItemToArray(*rules, cJSON_CreateString(it->valuestring));
	}
	return 0;
}

int e2b_control_network(const cJSON *body, const struct sessnet_policy *cap, cJSON **out, char *err,
			size_t errlen)
{
	*out = NULL;
	const cJSON *aia = cJSON_GetObjectItemCaseSensitive(body, "allow_internet_access");
	const cJSON *net = cJSON_GetObjectItemCaseSensitive(body, "network");
	if (aia && !cJSON_IsBool(aia) && !cJSON_IsNull(aia)) {
		snprintf(err, errlen, "allow_internet_access must be true or false");
		return -1;
	}
	if (net && !cJSON_IsObject(net) && !cJSON_IsNull(net)) {
		snprintf(err, errlen, "network must be an object");
		return -1;
	}
	const cJSON *it, *allow = NULL, *deny = NULL, *obj = cJSON_IsObject(net) ? net : NULL;
	cJSON_ArrayForEach(it, obj)
	{
		if (!strcmp(it->string, "allowOut"))
			allow = it;
		else if (!strcmp(it->string, "denyOut"))
			deny = it;
		/* inbound: the judge serves no sandbox ports to the public */
		else if (strcmp(it->string, "allowPublicTraffic") &&
			 strcmp(it->string, "maskRequestHost") &&
			 strcmp(it->string, "httpsPorts")) {
			snprintf(err, errlen,
				 "network.%.40s cannot be mapped onto this judge's egress policy "
				 "(allowOut, denyOut: docs/e2b.md)",
				 it->string);
			return -1;
		}
	}
	bool deny_all = false;
	cJSON_ArrayForEach(it, deny)
	{
		if (!cJSON_IsString(it) || strcmp(it->valuestring, E2B_ALL_TRAFFIC)) {
			snprintf(err, errlen,
				 "network.denyOut: only ALL_TRAFFIC (%s) can be mapped: this judge "
				 "denies what network.allowOut does not list",
				 E2B_ALL_TRAFFIC);
			return -1;
		}
		deny_all = true;
	}
	if (deny && !cJSON_IsArray(deny)) {
		snprintf(err, errlen, "network.denyOut must be a list");
		return -1;
	}
	bool all = false;
	cJSON *rules = NULL;
	if (allow && allow_out(allow, &rules, &all, err, errlen) < 0) {
		cJSON_Delete(rules);
		return -1;
	}
	if (all || (rules && rules->child)) {
		/* allowOut wins over denyOut, as in E2B */
		if (all) {
			cJSON_Delete(rules);
			*out = cJSON_CreateString("open");
		} else {
			*out = cJSON_CreateObject();
			cJSON_AddItemToObject(*out, "allow", rules);
		}
		return 0;
	}
	cJSON_Delete(rules);
	if (cJSON_IsFalse(aia) || deny_all) {
		*out = cJSON_CreateString("none");
		return 0;
	}
	/* allow_internet_access true or absent (the SDKs' default): the most the
	 * key's cap allows, so that a default create is never refused */
	struct sessnet_policy most;
	sessnet_cap_most(cap, &most);
	*out = sessnet_json(&most);
	return 1;
}

static void print_json(struct strbuf *out, cJSON *o)
{
	char *s = cJSON_PrintUnformatted(o);
	strbuf_addstr(out, s);
	free(s);
	cJSON_Delete(o);
}

/* True when session s (its /v1 JSON) holds every pair of want (NULL: any). */
static bool metadata_match(const cJSON *s, const cJSON *want)
{
	const cJSON *have = cJSON_GetObjectItemCaseSensitive(s, "metadata"), *it;
	cJSON_ArrayForEach(it, want)
	{
		const cJSON *v = cJSON_GetObjectItemCaseSensitive(have, it->string);
		if (!cJSON_IsString(v) || strcmp(v->valuestring, it->valuestring))
			return false;
	}
	return true;
}

/* Appends the percent-decoding of n bytes at s to out ('+' a space, as in a
 * form). Returns false for a bad escape. */
static bool form_decode(const char *s, size_t n, struct strbuf *out)
{
	for (size_t i = 0; i < n; i++) {
		if (s[i] == '+') {
			strbuf_addch(out, ' ');
		} else if (s[i] == '%') {
			static const char hex[] = "0123456789abcdef";
			const char *h1, *h2;
			if (i + 2 >= n || !s[i + 1] || !s[i + 2] ||
			    !(h1 = strchr(hex, tolower((unsigned char)s[i + 1]))) ||
			    !(h2 = strchr(hex, tolower((unsigned char)s[i + 2]))))
				return false;
			strbuf_addch(out, (char)((h1 - hex) << 4 | (h2 - hex)));
			i += 2;
		} else {
			strbuf_addch(out, s[i]);
		}
	}
	return true;
}

/* List's ?metadata= ("k=v&k2=v2" as a form, each key and value
 * percent-encoded once more: the SDK's encoding) into *out; NULL when
 * absent. Returns 0, or -1 when it cannot be read. */
static int metadata_query(const char *q, cJSON **out)
{
	*out = NULL;
	if (!q || !*q)
		return 0;
	cJSON *o = cJSON_CreateObject();
	for (const char *p = q; *p;) {
		size_t len = strcspn(p, "&");
		const char *eq = memchr(p, '=', len);
		struct strbuf k1 = STRBUF_INIT, v1 = STRBUF_INIT, k = STRBUF_INIT, v = STRBUF_INIT;
		size_t kl = eq ? (size_t)(eq - p) : len;
		bool ok = kl && form_decode(p, kl, &k1) &&
			  form_decode(eq ? eq + 1 : "", eq ? len - kl - 1 : 0, &v1) &&
			  form_decode(k1.buf ? k1.buf : "", k1.len, &k) &&
			  form_decode(v1.buf ? v1.buf : "", v1.len, &v);
		if (ok) {
			cJSON_DeleteItemFromObjectCaseSensitive(o, k.buf);
			cJSON_AddStringToObject(o, k.buf, v.buf ? v.buf : "");
		}
		strbuf_release(&k1);
		strbuf_release(&v1);
		strbuf_release(&k);
		strbuf_release(&v);
		if (!ok) {
			cJSON_Delete(o);
			return -1;
		}
		p += len + (p[len] == '&');
	}
	*out = o;
	return 0;
}

static void ectx_free(void *p)
{
	struct ectx *c = p;
	if (c)
		cJSON_Delete(c->metadata);
	free(c);
}

/* The transform: the session endpoint's answer (status, body) as E2B's. */
static int render(struct http_request *r, int status, const char *body, size_t len,
		  struct strbuf *out, void *arg)
{
	(void)r;
	(void)len;
	struct ectx *c = arg;
	cJSON *j = cJSON_Parse(body);
	if (cJSON_IsNumber(cJSON_GetObjectItemCaseSensitive(j, "code"))) {
		/* already E2B's (reply_error) */
		cJSON_Delete(j);
		return -1;
	}
	if (status >= 300) {
		cJSON_Delete(j);
		struct strbuf m = STRBUF_INIT;
		e2b_control_message(body, &m);
		int st = error_status(status);
		e2b_control_error(out, st, m.buf ? m.buf : "");
		strbuf_release(&m);
		return st;
	}
	int ret = 200;
	switch (c->op) {
	case OP_CREATE:
		print_json(out, sandbox_json(c, j));
		ret = 201;
		break;
	case OP_LIST: {
		cJSON *arr = cJSON_CreateArray(), *s;
		cJSON_ArrayForEach(s, cJSON_GetObjectItemCaseSensitive(j, "sessions"))
		{
			if (((running(s) && c->list_running) || (paused(s) && c->list_paused)) &&
			    metadata_match(s, c->metadata))
				cJSON_AddItemToArray(arr, detail_json(s));
		}
		print_json(out, arr);
		break;
	}
	case OP_PAUSE:
		ret = 204;
		break;
	case OP_SNAPSHOT: {
		/* E2B's SnapshotInfo: the id starts sandboxes (templateID) and is
		 * what deleteSnapshot takes; the name, when given, is its one name */
		cJSON *o = cJSON_CreateObject();
		cJSON_AddStringToObject(o, "snapshotID", str(j, "snapshot_id"));
		cJSON *names = cJSON_AddArrayToObject(o, "names");
		if (*str(j, "name"))
			cJSON_AddItemToArray(names, cJSON_CreateString(str(j, "name")));
		print_json(out, o);
		ret = 201;
		break;
	}
	case OP_INFO:
	case OP_CONNECT:
	case OP_TIMEOUT:
	case OP_METRICS:
		if (!running(j) && !(c->op == OP_INFO && paused(j))) {
			e2b_control_error(out, 404, "the sandbox is not running");
			ret = 404;
		} else if (c->op == OP_INFO) {
			print_json(out, detail_json(j));
		} else if (c->op == OP_CONNECT) {
			print_json(out, sandbox_json(c, j));
		} else if (c->op == OP_METRICS) {
			print_json(out, metrics_json(c, j));
		} else {
			ret = 204;
		}
		break;
	case OP_KILL:
		ret = 204;
		break;
	}
	cJSON_Delete(j);
	return ret;
}

void e2b_reply_error(struct http_request *r, int status, const char *message)
{
	struct strbuf b = STRBUF_INIT;
	e2b_control_error(&b, status, message);
	http_respond(r, status, "application/json", b.buf, b.len, NULL);
	strbuf_release(&b);
}

/* The "timeout" (seconds) of E2B body in as an idle TTL: def when absent,
 * within 1 s and the judge's cap. */
static long timeout_of(const cJSON *in, double def, const struct api *a)
{
	const cJSON *t = cJSON_GetObjectItemCaseSensitive(in, "timeout");
	double s = cJSON_IsNumber(t) ? t->valuedouble : def;
	if (s < 1)
		s = 1;
	if (s > (double)a->cfg->session_max_idle_ttl_s)
		s = (double)a->cfg->session_max_idle_ttl_s;
	return (long)s;
}

/* The create body into the /v1 create's: a Python session whose idle TTL is
 * the sandbox's timeout (300 s when absent, clamped to the judge's cap), with
 * envVars as the session's own variables; autoPause (lifecycle onTimeout
 * "pause") makes its idle_action pause. Returns NULL after answering a 400. */
static cJSON *create_body(struct http_request *r, struct api *a)
{
	cJSON *in = cJSON_ParseWithLength(r->body.buf ? r->body.buf : "", r->body.len);
	if (!cJSON_IsObject(in)) {
		cJSON_Delete(in);
		e2b_reply_error(r, 400, "the body must be a JSON object");
		return NULL;
	}
	struct sessnet_policy cap;
	char err[400];
	cJSON *network = NULL;
	if (sessions_egress_cap(a, r, &cap, err, sizeof err) < 0) {
		cJSON_Delete(in);
		e2b_reply_error(r, 503, err);
		return NULL;
	}
	int nrc = e2b_control_network(in, &cap, &network, err, sizeof err);
	if (nrc < 0) {
		cJSON_Delete(in);
		e2b_reply_error(r, 400, err);
		return NULL;
	}
	long timeout = timeout_of(in, 300, a);
	const cJSON *ap = cJSON_GetObjectItemCaseSensitive(in, "autoPause");
	const char *idle_action = cJSON_IsBool(ap) ? (cJSON_IsTrue(ap) ? "pause" : "close") : NULL;
	const cJSON *meta = cJSON_GetObjectItemCaseSensitive(in, "metadata");
	cJSON *metadata = cJSON_IsObject(meta) && meta->child ? cJSON_Duplicate(meta, true) : NULL;
	if (meta && !cJSON_IsObject(meta) && !cJSON_IsNull(meta)) {
		cJSON_Delete(in);
		cJSON_Delete(network);
		e2b_reply_error(r, 400, "metadata must be an object of strings");
		return NULL;
	}
	const cJSON *ev = cJSON_GetObjectItemCaseSensitive(in, "envVars");
	cJSON *env = cJSON_IsObject(ev) && ev->child ? cJSON_Duplicate(ev, true) : NULL;
	/* Sandbox.create(snapshotId): a template that is a snapshot's id starts
	 * the sandbox from that snapshot (its language; another key's is a 404) */
	const cJSON *tpl = cJSON_GetObjectItemCaseSensitive(in, "templateID");
	char snapshot[37] = "";
	if (cJSON_IsString(tpl) && sessreq_id_valid(tpl->valuestring))
		snprintf(snapshot, sizeof snapshot, "%s", tpl->valuestring);
	cJSON_Delete(in);
	const struct lang *l = snapshot[0] ? NULL : lang_by_e2b(&a->langs, "");
	if (nrc == 1 && snapshot[0]) {
		/* the default keeps the snapshot's own policy */
		cJSON_Delete(network);
		network = NULL;
	}
	if (!l && !snapshot[0]) {
		cJSON_Delete(network);
		cJSON_Delete(env);
		cJSON_Delete(metadata);
		e2b_reply_error(r, 503,
				"no session language is marked e2b_default (languages/*.ini)");
		return NULL;
	}
	cJSON *o = cJSON_CreateObject();
	if (snapshot[0])
		cJSON_AddStringToObject(o, "from_snapshot", snapshot);
	else
		cJSON_AddStringToObject(o, "language", l->name);
	cJSON_AddNumberToObject(o, "idle_ttl", (double)timeout);
	if (idle_action)
		cJSON_AddStringToObject(o, "idle_action", idle_action);
	/* /v1's create checks the names and values (a 400 here when they are bad) */
	if (env)
		cJSON_AddItemToObject(o, "env", env);
	/* /v1's create checks it against the cap: beyond it a 403 */
	if (network)
		cJSON_AddItemToObject(o, "network", network);
	/* /v1's create checks its sizes (a 400 here when too large) */
	if (metadata)
		cJSON_AddItemToObject(o, "metadata", metadata);
	return o;
}

/* The sandbox id after "/" in arg into id (at most 36 bytes), and what
 * follows it. */
static const char *split(const char *arg, char id[48])
{
	const char *s = arg + 1;
	size_t n = strcspn(s, "/");
	snprintf(id, 48, "%.*s", (int)(n < 47 ? n : 47), s);
	return s + n;
}

void e2b_control_handle(struct http_request *r, struct api *a, const char *arg)
{
	bool post = !strcmp(r->method, "POST"), del = !strcmp(r->method, "DELETE");
	char id[48] = "";
	const char *rest = "";
	enum op op;
	if (!*arg || !strcmp(arg, "/")) {
		op = post ? OP_CREATE : OP_LIST;
		if (del)
			return e2b_reply_error(r, 405, "DELETE needs a sandbox id");
	} else {
		rest = split(arg, id);
		if (!*rest && del)
			op = OP_KILL;
		else if (!*rest && !post)
			op = OP_INFO;
		else if (!strcmp(rest, "/connect") && post)
			op = OP_CONNECT;
		else if (!strcmp(rest, "/pause") && post)
			op = OP_PAUSE;
		else if (!strcmp(rest, "/snapshots") && post)
			op = OP_SNAPSHOT;
		else if (!strcmp(rest, "/timeout") && post)
			op = OP_TIMEOUT;
		else if (!strcmp(rest, "/metrics") && !post && !del)
			op = OP_METRICS;
		else
			return e2b_reply_error(r, 404,
					       "this judge does not serve that E2B endpoint");
	}
	long long start = 0, end = 0;
	if (op == OP_METRICS && (http_query_long(r, "start", 0, 0, LLONG_MAX, &start) < 0 ||
				 http_query_long(r, "end", 0, 0, LLONG_MAX, &end) < 0))
		return e2b_reply_error(r, 400, "start and end are Unix times in seconds");
	struct ectx *c = xcalloc(1, sizeof *c);
	c->op = op;
	c->start = start;
	c->end = end;
	int run = http_query_lists(r, "state", "running"),
	    pau = http_query_lists(r, "state", "paused");
	c->list_running = run != 0;
	c->list_paused = pau != 0;
	c->auth_on = a->auth_on;
	r->transform = render;
	r->transform_arg = c;
	r->transform_free = ectx_free;
	if (op == OP_LIST && metadata_query(http_query(r, "metadata"), &c->metadata) < 0)
		return e2b_reply_error(r, 400, "metadata is k=v pairs joined by & (URL-encoded)");
	if (op == OP_CONNECT && e2b_access_token_of(a, id, r->key_id, c->token) < 0)
		return e2b_reply_error(r, 503, "cannot read the sandbox's access token");
	const char *key = http_header(r, "X-API-KEY");
	if (op == OP_CONNECT && !c->token[0] && a->auth_on && key)
		snprintf(c->token, sizeof c->token, "%s", key); /* made before its secrets */
	switch (op) {
	case OP_CREATE: {
		/* a secret of its own: always with keys on (the sandbox's traffic
		 * carries nothing else), else when asked (POST /sandboxes' secure) */
		cJSON *body = cJSON_ParseWithLength(r->body.buf ? r->body.buf : "", r->body.len);
		bool secure = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(body, "secure"));
		cJSON_Delete(body);
		if ((a->auth_on || secure) && e2b_access_token_new(c->token) < 0)
			return e2b_reply_error(r, 503, "no random bytes for the access token");
		cJSON *in = create_body(r, a);
		if (in)
			sessions_create_token(r, a, in, c->token[0] ? c->token : NULL);
		cJSON_Delete(in);
		break;
	}
	case OP_LIST:
		sessions_list(r, a);
		break;
	case OP_KILL:
		sessions_call(r, a, id, SCALL_CLOSE, NULL);
		break;
	case OP_PAUSE:
		/* {"memory": bool}: the files are kept either way, never the memory */
		sessions_call(r, a, id, SCALL_PAUSE, NULL);
		break;
	case OP_CONNECT: {
		/* a paused sandbox is resumed, a running one answered as it is;
		 * {"timeout": seconds} is its idle TTL from now on */
		cJSON *in = cJSON_ParseWithLength(r->body.buf ? r->body.buf : "", r->body.len);
		bool has = cJSON_IsNumber(cJSON_GetObjectItemCaseSensitive(in, "timeout"));
		long ttl = has ? timeout_of(in, 0, a) : 0;
		cJSON_Delete(in);
		sessions_resume_one(r, a, id, ttl);
		break;
	}
	case OP_SNAPSHOT: {
		/* {"name": ...}: the snapshot's name (E2B's names) */
		cJSON *in = cJSON_ParseWithLength(r->body.buf ? r->body.buf : "", r->body.len);
		const cJSON *name = cJSON_GetObjectItemCaseSensitive(in, "name");
		cJSON *body = cJSON_CreateObject();
		if (cJSON_IsString(name))
			cJSON_AddStringToObject(body, "name", name->valuestring);
		cJSON_Delete(in);
		sessions_snapshot(r, a, id, body);
		cJSON_Delete(body);
		break;
	}
	case OP_TIMEOUT: {
		/* {"timeout": seconds}: the sandbox's end moves to now + it, as the
		 * idle TTL (clamped as create clamps it) */
		cJSON *in = cJSON_ParseWithLength(r->body.buf ? r->body.buf : "", r->body.len);
		long s = timeout_of(in, 300, a);
		cJSON_Delete(in);
		cJSON *body = cJSON_CreateObject();
		cJSON_AddNumberToObject(body, "idle_ttl", (double)s);
		sessions_set_idle_ttl(r, a, id, body);
		cJSON_Delete(body);
		break;
	}
	default:
		sessions_get(r, a, id);
	}
}
