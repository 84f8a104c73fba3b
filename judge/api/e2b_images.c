/* e2b_images: GET /snapshots, DELETE /templates/{id} (e2b_images.h). */
#include "judge/api/e2b_images.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <string.h>

#include "judge/api/api.h"
#include "judge/api/e2b_control.h"
#include "judge/api/http.h"
#include "judge/service/session/sessimage.h"
#include "judge/service/session/sessreq.h"
#include "judge/store/db.h"

#define TEMPLATES "/templates/"

/* The key's snapshots as E2B's SnapshotInfo list, of one sandbox and one
 * name when the query says so. No pagination: at most 1000, all at once. */
static void list(struct http_request *r, struct api *a, int64_t key)
{
	const char *sandbox = http_query(r, "sandboxID"), *name = http_query(r, "name");
	char err[512];
	struct db *db = api_db(a, 5000, err, sizeof err);
	cJSON *all = NULL;
	int rc = db ? sessimage_snapshot_list(db, key, NULL, &all, err, sizeof err) : -1;
	if (db)
		db_pool_put(a->pool, db);
	if (rc < 0)
		return e2b_reply_error(r, 503, err);
	cJSON *arr = cJSON_CreateArray(), *s;
	cJSON_ArrayForEach(s, all)
	{
		const char *sid =
		    cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(s, "session_id"));
		const char *n = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(s, "name"));
		if ((sandbox && (!sid || strcmp(sid, sandbox))) ||
		    (name && (!n || strcmp(n, name))))
			continue;
		cJSON *o = cJSON_CreateObject();
		cJSON_AddStringToObject(
		    o, "snapshotID",
		    cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(s, "id")));
		cJSON *names = cJSON_AddArrayToObject(o, "names");
		if (n && *n)
			cJSON_AddItemToArray(names, cJSON_CreateString(n));
		cJSON_AddItemToArray(arr, o);
	}
	cJSON_Delete(all);
	http_respond_json(r, 200, arr);
	cJSON_Delete(arr);
}

/* Sandbox.deleteSnapshot: 204, or 404 when the key has no such snapshot. */
static void remove_one(struct http_request *r, struct api *a, int64_t key, const char *id)
{
	if (!sessreq_id_valid(id))
		return e2b_reply_error(r, 404, "no such snapshot");
	char err[512];
	struct db *db = api_db(a, 5000, err, sizeof err);
	int rc = db ? sessimage_snapshot_delete(db, id, key, err, sizeof err) : -1;
	if (db)
		db_pool_put(a->pool, db);
	if (rc < 0)
		return e2b_reply_error(r, 503, err);
	if (rc == 0)
		return e2b_reply_error(r, 404, "no such snapshot");
	if (rc == 2)
		return e2b_reply_error(r, 409, "a sandbox is starting from this snapshot");
	http_respond(r, 204, "application/json", "", 0, NULL);
}

void e2b_images_handle(struct http_request *r, struct api *a, const char *url)
{
	int64_t key = a->auth_on ? r->key_id : 0;
	bool del = !strcmp(r->method, "DELETE");
	if (!strcmp(url, "/snapshots") && !del)
		return list(r, a, key);
	size_t n = sizeof TEMPLATES - 1;
	if (!strncmp(url, TEMPLATES, n) && del && !strchr(url + n, '/'))
		return remove_one(r, a, key, url + n);
	e2b_reply_error(r, 404, "this judge does not serve that E2B endpoint");
}
