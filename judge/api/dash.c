/* dash: /v1/admin/stats and /v1/admin/keys, the operator dashboard's JSON. */
#include "judge/api/dash.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "judge/api/api.h"
#include "judge/api/http.h"
#include "judge/api/render.h"
#include "judge/grading/request.h"
#include "judge/service/admin.h"
#include "judge/service/auth.h"
#include "judge/service/blobstore.h"
#include "judge/service/session/sessdb.h"
#include "judge/service/session/sessnet.h"
#include "judge/service/session/sessreq.h"
#include "judge/store/db.h"

bool dash_admit(struct http_request *r, struct api *a)
{
	if (auth_is_admin(a->auth, r->key_id))
		return true;
	http_error(r, 403, "forbidden",
		   "this API key is not an admin key (judge keys create --admin)");
	return false;
}

void dash_stats(struct http_request *r, struct api *a)
{
	char err[512];
	/* ?egress_session=ID: that session's network attempts, any key's */
	const char *es = http_query(r, "egress_session");
	if (es && !*es)
		es = NULL;
	if (es && !sessreq_id_valid(es)) {
		http_error(r, 422, "invalid_field", "egress_session must be a session id");
		return;
	}
	struct db *db = api_db(a, 5000, err, sizeof err);
	if (!db)
		return render_db_error(r, "admin stats", err);
	cJSON *o = NULL;
	long sess[SESS_STATUS_COUNT] = {0};
	long long stored = 0;
	int rc = admin_stats(db, es, &o, err, sizeof err);
	if (rc == 0)
		rc = sessdb_counts(db, sess, err, sizeof err);
	if (rc == 0)
		rc = blobstore_used(db, -1, &stored, err, sizeof err);
	db_pool_put(a->pool, db);
	if (rc < 0) {
		cJSON_Delete(o);
		return render_db_error(r, "admin stats", err);
	}
	cJSON *so = cJSON_AddObjectToObject(o, "sessions");
	cJSON_AddNumberToObject(so, "open", (double)(sess[SESS_STARTING] + sess[SESS_READY]));
	cJSON_AddNumberToObject(so, "paused", (double)sess[SESS_PAUSED]);
	/* compressed bytes of every key's pause images and snapshots */
	cJSON_AddNumberToObject(so, "images_stored", (double)stored);
	cJSON *by = cJSON_AddObjectToObject(so, "by_status");
	for (int i = 0; i < SESS_STATUS_COUNT; i++)
		cJSON_AddNumberToObject(by, sess_status_name((enum sess_status)i), (double)sess[i]);
	/* this process's own counters beside the database's */
	cJSON_AddNumberToObject(o, "http_in_flight", (double)http_active(a->http));
	cJSON_AddBoolToObject(o, "auth", a->auth_on);
	http_respond_json(r, 200, o);
	cJSON_Delete(o);
}

/* A key's egress field (sessnet_keycap_parse) into *out, normalized as
 * api_keys.egress stores it (NULL for null: judge.ini's cap). Returns 0, or
 * -1 after answering 422. */
static int egress_field(struct http_request *r, const cJSON *egress, cJSON **out)
{
	*out = NULL;
	if (cJSON_IsNull(egress))
		return 0;
	struct sessnet_policy cap;
	char err[400];
	if (sessnet_keycap_parse(egress, &cap, err, sizeof err) < 0) {
		http_error(r, 422, "invalid_field", "%s", err);
		return -1;
	}
	*out = sessnet_cap_json(&cap);
	return 0;
}

/* Answers key id as GET /v1/admin/keys/{id} shows it (status 200), or 404. */
static void one_key(struct http_request *r, struct api *a, long long id)
{
	char err[512];
	struct db *db = api_db(a, 5000, err, sizeof err);
	if (!db)
		return render_db_error(r, "read key", err);
	cJSON *keys = NULL;
	int rc = auth_key_list_json(db, id, &keys, err, sizeof err);
	db_pool_put(a->pool, db);
	if (rc < 0)
		return render_db_error(r, "read key", err);
	cJSON *k = cJSON_DetachItemFromArray(keys, 0);
	cJSON_Delete(keys);
	if (!k) {
		http_error(r, 404, "not_found", "no key %lld", id);
		return;
	}
	http_respond_json(r, 200, k);
	cJSON_Delete(k);
}

/* POST /v1/admin/keys: {"name": "1 to 200 characters", "admin": false, "egress": null}. */
static void create_key(struct http_request *r, struct api *a)
{
	cJSON *in = NULL, *egress = NULL;
	struct request_error e;
	if (request_parse_json(a->cfg, r->body.buf, r->body.len, &in, &e) < 0)
		return render_req_error(r, &e);
	if (!cJSON_IsObject(in)) {
		http_error(r, 422, "missing_field", "the body must be an object with 'name'");
		goto out;
	}
	const cJSON *name = cJSON_GetObjectItemCaseSensitive(in, "name");
	const cJSON *admin = cJSON_GetObjectItemCaseSensitive(in, "admin");
	const cJSON *f;
	cJSON_ArrayForEach(f, in)
	{
		if (strcmp(f->string, "name") && strcmp(f->string, "admin") &&
		    strcmp(f->string, "egress")) {
			http_error(r, 422, "invalid_field",
				   "unknown field '%.60s' (name, admin, egress)", f->string);
			goto out;
		}
	}
	if (!name) {
		http_error(r, 422, "missing_field", "'name' is required");
		goto out;
	}
	if (!cJSON_IsString(name) || !*name->valuestring || strlen(name->valuestring) > 200) {
		http_error(r, 422, "invalid_field", "'name' must be a string of 1 to 200 bytes");
		goto out;
	}
	if (admin && !cJSON_IsBool(admin)) {
		http_error(r, 422, "invalid_field", "'admin' must be true or false");
		goto out;
	}
	f = cJSON_GetObjectItemCaseSensitive(in, "egress");
	if (f && egress_field(r, f, &egress) < 0)
		goto out;
	char err[512], key[AUTH_KEY_LEN + 1];
	int64_t id;
	struct db *db = api_db(a, 5000, err, sizeof err);
	if (!db) {
		render_db_error(r, "create key", err);
		goto out;
	}
	bool is_admin = cJSON_IsTrue(admin);
	int rc = auth_key_create_as(db, name->valuestring, is_admin, key, &id, err, sizeof err);
	if (rc == 0 && egress && auth_key_set_egress(db, id, egress, err, sizeof err) < 0)
		rc = -1;
	db_pool_put(a->pool, db);
	if (rc < 0) {
		render_db_error(r, "create key", err);
		goto out;
	}
	auth_invalidate(a->auth); /* usable at once */
	cJSON *o = cJSON_CreateObject();
	cJSON_AddNumberToObject(o, "id", (double)id);
	cJSON_AddStringToObject(o, "name", name->valuestring);
	cJSON_AddBoolToObject(o, "admin", is_admin);
	cJSON_AddItemToObject(o, "egress", egress ? egress : cJSON_CreateNull());
	egress = NULL;
	cJSON_AddStringToObject(o, "key", key);
	http_respond_json(r, 201, o);
	cJSON_Delete(o);
out:
	cJSON_Delete(egress);
	cJSON_Delete(in);
}

void dash_keys(struct http_request *r, struct api *a)
{
	if (!strcmp(r->method, "POST"))
		return create_key(r, a);
	char err[512];
	struct db *db = api_db(a, 5000, err, sizeof err);
	if (!db)
		return render_db_error(r, "list keys", err);
	cJSON *keys = NULL;
	int rc = auth_key_list_json(db, 0, &keys, err, sizeof err);
	db_pool_put(a->pool, db);
	if (rc < 0)
		return render_db_error(r, "list keys", err);
	cJSON *o = cJSON_CreateObject();
	cJSON_AddItemToObject(o, "keys", keys);
	/* which one is the caller's: the page warns before revoking it */
	cJSON_AddNumberToObject(o, "own_id", (double)r->key_id);
	http_respond_json(r, 200, o);
	cJSON_Delete(o);
}

/* PATCH /v1/admin/keys/{id}: {"egress": cap | null, "weight": 1-1000}. */
static void update_key(struct http_request *r, struct api *a, long long n)
{
	cJSON *in = NULL, *egress = NULL;
	struct request_error e;
	char err[512];
	if (request_parse_json(a->cfg, r->body.buf, r->body.len, &in, &e) < 0)
		return render_req_error(r, &e);
	const cJSON *f, *eg = NULL, *w = NULL;
	if (!cJSON_IsObject(in) || !in->child) {
		http_error(r, 422, "missing_field",
			   "the body must be an object with 'egress' or 'weight'");
		goto out;
	}
	cJSON_ArrayForEach(f, in)
	{
		if (!strcmp(f->string, "egress"))
			eg = f;
		else if (!strcmp(f->string, "weight"))
			w = f;
		else {
			http_error(r, 422, "invalid_field",
				   "unknown field '%.60s' (egress, weight)", f->string);
			goto out;
		}
	}
	if (w &&
	    (!cJSON_IsNumber(w) || w->valuedouble < AUTH_WEIGHT_MIN ||
	     w->valuedouble > AUTH_WEIGHT_MAX || w->valuedouble != (double)(long)w->valuedouble)) {
		http_error(r, 422, "invalid_field", "'weight' must be a whole number from %d to %d",
			   AUTH_WEIGHT_MIN, AUTH_WEIGHT_MAX);
		goto out;
	}
	if (eg && egress_field(r, eg, &egress) < 0)
		goto out;
	struct db *db = api_db(a, 5000, err, sizeof err);
	if (!db) {
		render_db_error(r, "update key", err);
		goto out;
	}
	int rc = 1;
	if (eg)
		rc = auth_key_set_egress(db, n, egress, err, sizeof err);
	if (rc == 1 && w)
		rc = auth_key_set_weight(db, n, (long)w->valuedouble, err, sizeof err);
	db_pool_put(a->pool, db);
	if (rc < 0) {
		render_db_error(r, "update key", err);
		goto out;
	}
	if (rc == 0) {
		http_error(r, 404, "not_found", "no active key %lld", n);
		goto out;
	}
	one_key(r, a, n);
out:
	cJSON_Delete(egress);
	cJSON_Delete(in);
}

void dash_key(struct http_request *r, struct api *a, const char *id)
{
	char *end;
	long long n = strtoll(id, &end, 10);
	if (n <= 0 || *end || end - id > 18) {
		http_error(r, 404, "not_found", "no such key: %.40s", id);
		return;
	}
	if (!strcmp(r->method, "PATCH"))
		return update_key(r, a, n);
	if (strcmp(r->method, "DELETE"))
		return one_key(r, a, n);
	char err[512];
	struct db *db = api_db(a, 5000, err, sizeof err);
	if (!db)
		return render_db_error(r, "revoke key", err);
	struct auth_revoked ended = {0};
	int rc = auth_key_revoke(db, n, &ended, err, sizeof err);
	db_pool_put(a->pool, db);
	if (rc < 0)
		return render_db_error(r, "revoke key", err);
	if (rc == 0) {
		http_error(r, 404, "not_found", "no active key %lld", n);
		return;
	}
	cJSON *o = cJSON_CreateObject();
	cJSON_AddNumberToObject(o, "id", (double)n);
	cJSON_AddBoolToObject(o, "revoked", true);
	cJSON_AddNumberToObject(o, "cancelled", (double)ended.cancelled);
	cJSON_AddNumberToObject(o, "sessions_closed", (double)ended.sessions);
	auth_invalidate(a->auth); /* refused at once */
	http_respond_json(r, 200, o);
	cJSON_Delete(o);
}
