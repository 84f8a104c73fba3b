/* status: the states of a submission. This enum, the API strings below and the
 * CHECK constraint on submissions.status in migrations/ list the same states. */
#pragma once
#include <stdbool.h>

enum sub_status {
	SUB_QUEUED,
	SUB_RUNNING,
	SUB_COMPLETED, /* ran without expected output and without failure */
	SUB_ACCEPTED,
	SUB_WRONG_ANSWER,
	SUB_TIMEOUT,
	SUB_MEMORY_LIMIT,
	SUB_OUTPUT_LIMIT,
	SUB_RUNTIME_ERROR,
	SUB_COMPILE_ERROR,
	SUB_INTERNAL_ERROR,
	SUB_CANCELLED, /* queued work of an API key that was revoked: never ran */
	SUB_STATUS_COUNT
};

/* API string of s ("queued", "accepted", ...). */
const char *status_name(enum sub_status s);
/* Parses an API string; returns -1 when unknown. */
int status_parse(const char *s, enum sub_status *out);
/* True for every state but queued and running. */
bool status_is_final(enum sub_status s);
