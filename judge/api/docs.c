/* docs: serves the OpenAPI document and the reference page built from web/. */
#include "judge/api/docs.h"

#include <string.h>

#include "judge/api/http.h"

const struct docs_file *docs_find(const char *name)
{
	for (const struct docs_file *f = docs_files; f->name; f++)
		if (!strcmp(f->name, name))
			return f;
	return NULL;
}

void docs_serve(struct http_request *r)
{
	static const struct {
		const char *path, *file, *type;
	} map[] = {
	    {"/openapi.json", "openapi.json", "application/json"},
	    {"/docs", "docs.html", "text/html; charset=utf-8"},
	    {"/docs.js", "docs.js", "text/javascript; charset=utf-8"},
	};
	for (size_t i = 0; i < sizeof map / sizeof map[0]; i++) {
		if (strcmp(r->url, map[i].path))
			continue;
		const struct docs_file *f = docs_find(map[i].file);
		if (!f)
			break;
		/* the page runs only its own script (no inline one, no CDN) */
		const char *hdr[] = {"Content-Security-Policy",
				     "default-src 'self'; style-src 'self' 'unsafe-inline'", NULL};
		http_respond(r, 200, map[i].type, f->data, f->len, hdr);
		return;
	}
	http_error(r, 404, "not_found", "no such document: %.100s", r->url);
}
