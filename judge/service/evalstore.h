/* evalstore (evalstore_): evaluation runs in PostgreSQL (migrations/0005).
 *
 * An evaluation is one row plus one submission per sample, enqueued at bulk
 * priority in the same statement, so the workers grade samples like any other
 * submission, on every worker slot of every worker. Reading one joins its
 * samples' submissions: the state of the run is theirs.
 *
 * Progress: when a sample's submission becomes final, a trigger
 * (migrations/0007) counts it on the evaluation's row and writes a `sample`
 * event, and `done` after the last one, to the live output stream
 * "eval:<id>" (outstream.h), which GET /v1/evaluations/{id}/events relays.
 * The events:
 *   sample  {task_id, index, submission_id, status, passed, time_ms, done, total}
 *   done    {id, status: "done", done, total} (the relay sends the summary)
 */
#pragma once
#include <cjson/cJSON.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>

#include "judge/grading/status.h"

struct db;

/* Creates an evaluation of api_key_id (0 = none) with its samples: task_ids
 * and requests are JSON arrays of the same length (task id strings; normalized
 * requests, model.h). One statement: all or nothing. Returns 0 with *id, or
 * -1 with err. */
int evalstore_create(struct db *db, int64_t api_key_id, const char *language, const cJSON *ks,
		     const cJSON *task_ids, const cJSON *requests, int64_t *id, char *err,
		     size_t errlen);

/* One sample of an evaluation, as read. */
struct evalstore_sample {
	int idx;
	char *task_id;
	int64_t submission_id;
	enum sub_status status;
	cJSON *result; /* NULL while not final */
};

struct evalstore_view {
	int64_t id;
	char *language;
	cJSON *ks;
	int64_t created_ms;
	struct evalstore_sample *samples;
	int n;
	int done; /* samples with a final status */
	int queued;
};

/* Reads evaluation id (of api_key_id when > 0) into out (evalstore_view_release
 * it). Returns 1 found, 0 not found, -1 with err. */
int evalstore_get(struct db *db, int64_t id, int64_t api_key_id, struct evalstore_view *out,
		  char *err, size_t errlen);
void evalstore_view_release(struct evalstore_view *v);

/* The stream id of evaluation id's progress events ("eval:<id>"). */
#define EVSTORE_STREAM_FMT "eval:%" PRId64

/* Reads evaluation id's progress (of api_key_id when > 0) from its row
 * (counted by the trigger) without reading its samples' results: *done
 * samples final out of *total, and, when open_id is not NULL, *open_id the
 * submission of its last sample (by index) not final yet (0 when all are:
 * the one to wait for, which the workers claim last). Returns 1 found, 0 not
 * found, -1 with err. */
int evalstore_progress(struct db *db, int64_t id, int64_t api_key_id, int *done, int *total,
		       int64_t *open_id, char *err, size_t errlen);
