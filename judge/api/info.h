/* info: the read-only endpoints: languages, problems, health and the metrics page. */
#pragma once

struct api;
struct http_request;

/* GET /v1/languages: the languages with their versions (probed once, on the
 * first call). */
void info_languages(struct http_request *r, struct api *a);
/* The first line of language i's version probe (a->langs order; probed once,
 * on the first call), "" when it failed. Owned by a. */
const char *info_language_version(struct api *a, int i);
/* GET /v1/problems: id, name and whether this judge supports each problem. */
void info_problems(struct http_request *r, struct api *a);
/* GET /v1/problems/{id}: the problem's description, limits and samples (never
 * its secret data); 404 unknown_problem. */
void info_problem(struct http_request *r, struct api *a, const char *id);
/* GET /health: 200 when the database answers, else 503 "degraded". */
void info_health(struct http_request *r, struct api *a);
/* GET /metrics: Prometheus text (metrics.h) with the database's counts. */
void info_metrics(struct http_request *r, struct api *a);
