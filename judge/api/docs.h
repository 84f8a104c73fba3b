/* docs: the API's own description (/openapi.json, the /docs page and its /docs.js)
 * and the web pages: the playground at / and the operator's /dashboard.
 *
 * The files are in web/ and built into the binary (common/embed.sh makes
 * docs_files[]), so an installed judge serves them without a data folder.
 * They need no API key, like /health: the pages ask for one and send it as a
 * Bearer header (no cookies). web/src/ holds the pages' sources; `make web`
 * bundles them into web/playground.js and web/dashboard.js.
 */
#pragma once
#include <stddef.h>

struct http_request;

/* One embedded file of web/. */
struct docs_file {
	const char *name; /* "openapi.json", "docs.html", "docs.js" */
	const char *data; /* its bytes, with a 0 after them */
	size_t len;
};

/* The files of web/, ended by an entry with a NULL name (generated, static). */
extern const struct docs_file docs_files[];

/* The embedded file named name, or NULL. */
const struct docs_file *docs_find(const char *name);
/* GET /openapi.json, /docs, /docs.js, /, /dashboard or their assets: the file
 * with its Content-Type and Content-Security-Policy;
 * 404 not_found when the file was not built in. */
void docs_serve(struct http_request *r);
