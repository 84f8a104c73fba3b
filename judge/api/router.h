/* router: what the HTTP server calls for each request of the API (api.h holds
 * the server's state, api_start hands these to http_start): the route of its
 * URL (route.h), the method, the API key and its admission (auth.h), the
 * content type, then the endpoint's handler (submit.h, info.h, sessions.h,
 * problems.h, evaluation.h, judge0.h, piston.h, mcp.h ...). arg is the
 * struct api. */
#pragma once

struct http_request;

/* What the headers alone decide, before the body is read: route, method, key,
 * admission and content type (a request refused here never has its body
 * buffered). */
void router_headers(struct http_request *r, void *arg);
/* The body is in: the endpoint's handler. */
void router_request(struct http_request *r, void *arg);
/* The answer is sent: admission released, metrics and the debug log. */
void router_done(struct http_request *r, void *arg);
