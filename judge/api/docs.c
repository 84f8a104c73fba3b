/* docs: serves the OpenAPI document, the reference page, the playground, the problems page
 * and the dashboard built from web/. */
#include "judge/api/docs.h"

#include <stdbool.h>
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
	    {"/", "index.html", "text/html; charset=utf-8"},
	    {"/dashboard", "dashboard.html", "text/html; charset=utf-8"},
	    {"/playground.js", "playground.js", "text/javascript; charset=utf-8"},
	    {"/dashboard.js", "dashboard.js", "text/javascript; charset=utf-8"},
	    {"/problems", "problems.html", "text/html; charset=utf-8"},
	    {"/problems.js", "problems.js", "text/javascript; charset=utf-8"},
	    {"/app.css", "app.css", "text/css; charset=utf-8"},
	};
	/* The playground and the dashboard hold an API key: only their own
	 * scripts and styles, requests to this server only, never framed. The
	 * editor's styles go into constructed style sheets, which CSP allows. */
	static const char strict[] = "default-src 'none'; script-src 'self'; style-src 'self'; "
				     "connect-src 'self'; img-src 'self' data:; base-uri 'none'; "
				     "form-action 'none'; frame-ancestors 'none'";
	for (size_t i = 0; i < sizeof map / sizeof map[0]; i++) {
		if (strcmp(r->url, map[i].path))
			continue;
		const struct docs_file *f = docs_find(map[i].file);
		if (!f)
			break;
		/* the page runs only its own script (no inline one, no CDN) */
		bool docs = i < 3;
		const char *hdr[] = {"Content-Security-Policy",
				     docs ? "default-src 'self'; style-src 'self' 'unsafe-inline'"
					  : strict,
				     "X-Content-Type-Options",
				     "nosniff",
				     "Referrer-Policy",
				     "no-referrer",
				     "Cache-Control",
				     "no-cache",
				     NULL};
		http_respond(r, 200, map[i].type, f->data, f->len, hdr);
		return;
	}
	http_error(r, 404, "not_found", "no such document: %.100s", r->url);
}
