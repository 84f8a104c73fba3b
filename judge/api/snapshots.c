/* snapshots: GET /v1/snapshots, GET and DELETE /v1/snapshots/{id} (snapshots.h). */
#include "judge/api/snapshots.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <string.h>

#include "common/config.h"
#include "judge/api/api.h"
#include "judge/api/http.h"
#include "judge/api/render.h"
#include "judge/service/blobstore.h"
#include "judge/service/session/sessimage.h"
#include "judge/service/session/sessreq.h"
#include "judge/store/db.h"

static void no_snapshot(struct http_request *r, const char *id)
{
	http_error(r, 404, "not_found", "no snapshot '%.40s'", id);
}

/* GET /v1/snapshots, or /v1/snapshots/{id} when id. */
static void get(struct http_request *r, struct api *a, int64_t key, const char *id)
{
	char err[512];
	struct db *db = api_db(a, 5000, err, sizeof err);
	if (!db)
		return render_db_error(r, "snapshot list", err);
	cJSON *list = NULL;
	long long used = 0;
	int rc = sessimage_snapshot_list(db, key, id, &list, err, sizeof err);
	if (rc == 0 && !id)
		rc = blobstore_used(db, key, &used, err, sizeof err);
	db_pool_put(a->pool, db);
	if (rc < 0) {
		cJSON_Delete(list);
		return render_db_error(r, "snapshot list", err);
	}
	if (id) {
		cJSON *one = cJSON_DetachItemFromArray(list, 0);
		cJSON_Delete(list);
		if (!one)
			return no_snapshot(r, id);
		http_respond_json(r, 200, one);
		cJSON_Delete(one);
		return;
	}
	cJSON *o = cJSON_CreateObject();
	cJSON_AddItemToObject(o, "snapshots", list);
	/* what the key's images hold (pauses too) against its cap: room is made
	 * by deleting snapshots or closing paused sessions */
	cJSON_AddNumberToObject(o, "stored", (double)used);
	cJSON_AddNumberToObject(o, "cap", (double)(a->cfg->session_images_mb_per_key << 20));
	http_respond_json(r, 200, o);
	cJSON_Delete(o);
}

static void remove_one(struct http_request *r, struct api *a, int64_t key, const char *id)
{
	char err[512];
	struct db *db = api_db(a, 5000, err, sizeof err);
	if (!db)
		return render_db_error(r, "snapshot delete", err);
	int rc = sessimage_snapshot_delete(db, id, key, err, sizeof err);
	db_pool_put(a->pool, db);
	if (rc < 0)
		return render_db_error(r, "snapshot delete", err);
	if (rc == 0)
		return no_snapshot(r, id);
	if (rc == 2) {
		http_error(r, 409, "conflict",
			   "a session is starting from snapshot %s: delete it once that session "
			   "is ready",
			   id);
		return;
	}
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "id", id);
	cJSON_AddBoolToObject(o, "deleted", true);
	http_respond_json(r, 200, o);
	cJSON_Delete(o);
}

void snapshots_tool(struct http_request *r, struct api *a, bool del, const cJSON *body)
{
	int64_t key = a->auth_on ? r->key_id : 0;
	if (!del)
		return get(r, a, key, NULL);
	const cJSON *id = cJSON_GetObjectItemCaseSensitive(body, "snapshot_id");
	if (!cJSON_IsString(id)) {
		http_error(r, 422, "missing_field", "snapshot_id is required");
		return;
	}
	if (!sessreq_id_valid(id->valuestring))
		return no_snapshot(r, id->valuestring);
	remove_one(r, a, key, id->valuestring);
}

void snapshots_handle(struct http_request *r, struct api *a, enum route rt, const char *id)
{
	int64_t key = a->auth_on ? r->key_id : 0;
	if (rt == R_SNAPSHOTS)
		return get(r, a, key, NULL);
	/* not an id of ours (never a database error for a malformed one) */
	if (!sessreq_id_valid(id))
		return no_snapshot(r, id);
	if (!strcmp(r->method, "DELETE"))
		return remove_one(r, a, key, id);
	get(r, a, key, id);
}
