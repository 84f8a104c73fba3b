/* info: the read-only endpoints: languages, health and the metrics page. */
#pragma once

struct api;
struct http_request;

/* GET /v1/languages: the languages with their versions (probed once, on the
 * first call). */
void info_languages(struct http_request *r, struct api *a);
/* The first line of language i's version probe (a->langs order; probed once,
 * on the first call), "" when it failed. Owned by a. */
const char *info_language_version(struct api *a, int i);
/* GET /health: 200 when the database answers, else 503 "degraded". */
void info_health(struct http_request *r, struct api *a);
/* GET /metrics: Prometheus text (metrics.h) with the database's counts. */
void info_metrics(struct http_request *r, struct api *a);
