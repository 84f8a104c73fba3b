/* piston: a Piston v2 compatible front (GET /api/v2/runtimes, POST /api/v2/execute).
 *
 * How it works: a Piston request is turned into the body of /v1/execute
 * (language, source = files[0], files = the others, stdin, args, limits from
 * run_timeout and run_memory_limit), validated by request.c like every other
 * body, enqueued at interactive priority and waited for by submit.c (parked,
 * no thread held); the result JSON is then rendered in Piston's shape:
 * {language, version, run: {stdout, stderr, output, code, signal}, compile?}.
 * Every runtime has one version (its language's probe); a request's version
 * is "*", that version, or a semver range that holds it. Errors are Piston's
 * {"message": ...} with 400.
 */
#pragma once
#include <stdbool.h>

struct api;
struct http_request;

/* GET /api/v2/runtimes: [{language, version, aliases, runtime?}]. */
void piston_runtimes(struct http_request *r, struct api *a);
/* POST /api/v2/execute. Always answers or parks r (submit_resume carries it on). */
void piston_execute(struct http_request *r, struct api *a);
/* True when version ("X.Y.Z") is range: "*" or empty, the same string, or a
 * node-semver range (1.2.3, 1.2, 1, 1.x, =, <, <=, >, >=, ~, ^, "A - B",
 * comparators joined by blanks, alternatives by "||"). A range that does not
 * parse holds nothing. */
bool piston_version_match(const char *range, const char *version);
