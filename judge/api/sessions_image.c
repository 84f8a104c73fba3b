/* sessions_image: the routes of a session's stored images: resume, snapshot and
 * fork (pause is a plain call, sessions.c). */
#include <stdio.h>
#include <string.h>

#include "common/config.h"
#include "common/utf8.h"
#include "judge/api/api.h"
#include "judge/api/http.h"
#include "judge/api/render.h"
#include "judge/api/sessions.h"
#include "judge/api/sessions_int.h"
#include "judge/service/session/sessdb.h"
#include "judge/service/session/sessreq.h"
#include "judge/store/db.h"

int sessions_resume_paused(struct http_request *r, struct api *a, const char *id,
			   struct sess_row *row, struct sessions_ctx **then)
{
	char err[256];
	struct db *db = api_db(a, 5000, err, sizeof err);
	int rc = db ? sessdb_resume(db, id, sessions_key_of(a, r), a->cfg->worker_timeout_s, row,
				    err, sizeof err)
		    : -1;
	if (db)
		db_pool_put(a->pool, db);
	if (rc < 0)
		render_db_error(r, "session resume", err);
	else if (rc == 0)
		sessions_no_session(r, id);
	if (rc == 0 || rc < 0)
		return -1;
	if (rc == 2)
		return 0;
	*then = sessions_wait_start(r, a, id);
	return 1;
}

bool sessions_body_optional(enum route rt)
{
	return rt == R_SESSION_PAUSE || rt == R_SESSION_RESUME || rt == R_SESSION_SNAPSHOT ||
	       rt == R_SESSION_FORK || rt == R_SESSION_INTERRUPT;
}

/* POST /snapshot and /fork {name?}: a snapshot call; a fork then creates. */
void sessions_snapshot_call(struct http_request *r, struct api *a, const char *id, const cJSON *in,
			    bool fork)
{
	const cJSON *name = in ? cJSON_GetObjectItemCaseSensitive(in, "name") : NULL;
	if (in && !cJSON_IsObject(in)) {
		http_error(r, 422, "invalid_field", "the body must be a JSON object");
		return;
	}
	for (const cJSON *it = in ? in->child : NULL; it; it = it->next)
		if (strcmp(it->string, "name")) {
			http_error(r, 422, "unknown_field", "unknown field '%.40s'", it->string);
			return;
		}
	if (name && (!cJSON_IsString(name) || strlen(name->valuestring) >= 64 ||
		     !utf8_valid_text(name->valuestring, strlen(name->valuestring)))) {
		http_error(r, 422, "invalid_field", "name must be text of at most 63 bytes");
		return;
	}
	struct sess_call c;
	sess_call_init(&c, SCALL_SNAPSHOT);
	if (name)
		snprintf(c.image_name, sizeof c.image_name, "%s", name->valuestring);
	sessions_route_call_ex(r, a, id, &c, false, fork, NULL);
}

/* POST /resume: a paused session back on a new sandbox; an open one as it is. */
void sessions_resume_route(struct http_request *r, struct api *a, const char *id)
{
	struct sess_row row = {0};
	struct sessions_ctx *then = NULL;
	int rc = sessions_resume_paused(r, a, id, &row, &then);
	if (rc == 1) {
		then->resume = true;
		sessions_continue_create(then);
	} else if (rc == 0 && (row.status == SESS_READY || row.status == SESS_STARTING)) {
		cJSON *o = sess_row_json(&row);
		cJSON_AddBoolToObject(o, "restarted", false);
		http_respond_json(r, 200, o);
		cJSON_Delete(o);
	} else if (rc == 0)
		sessions_not_open(r, &row);
	sess_row_release(&row);
}

void sessions_snapshot(struct http_request *r, struct api *a, const char *id, const cJSON *in)
{
	char sid[37];
	if (sessions_id_of(r, id, sid) == 0)
		sessions_snapshot_call(r, a, sid, in, false);
}

void sessions_resume_one(struct http_request *r, struct api *a, const char *id, long idle_ttl_s)
{
	char sid[37], err[256];
	if (sessions_id_of(r, id, sid) < 0)
		return;
	if (idle_ttl_s > 0) {
		/* before the resume, which starts the idle clock with it; a session
		 * that is not open is answered by sessions_resume_route */
		struct db *db = api_db(a, 5000, err, sizeof err);
		int rc = db ? sessdb_set_idle_ttl(db, sid, sessions_key_of(a, r), idle_ttl_s, err,
						  sizeof err)
			    : -1;
		if (db)
			db_pool_put(a->pool, db);
		if (rc < 0) {
			render_db_error(r, "session update", err);
			return;
		}
	}
	sessions_resume_route(r, a, sid);
}

void sessions_image_tool(struct http_request *r, struct api *a, enum route rt, const cJSON *body)
{
	const cJSON *sid = cJSON_GetObjectItemCaseSensitive(body, "session_id");
	if (!cJSON_IsString(sid)) {
		http_error(r, 422, "missing_field", "session_id is required");
		return;
	}
	if (!sessreq_id_valid(sid->valuestring))
		return sessions_no_session(r, sid->valuestring);
	if (rt == R_SESSION_RESUME)
		return sessions_resume_route(r, a, sid->valuestring);
	cJSON *rest = cJSON_Duplicate(body, true);
	cJSON_DeleteItemFromObjectCaseSensitive(rest, "session_id");
	sessions_snapshot_call(r, a, sid->valuestring, rest, rt == R_SESSION_FORK);
	cJSON_Delete(rest);
}
