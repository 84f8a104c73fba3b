/* status: names of submission states. */
#include "judge/grading/status.h"

#include <string.h>

static const char *const names[SUB_STATUS_COUNT] = {
    [SUB_QUEUED] = "queued",
    [SUB_RUNNING] = "running",
    [SUB_COMPLETED] = "completed",
    [SUB_ACCEPTED] = "accepted",
    [SUB_WRONG_ANSWER] = "wrong_answer",
    [SUB_TIMEOUT] = "timeout",
    [SUB_MEMORY_LIMIT] = "memory_limit",
    [SUB_OUTPUT_LIMIT] = "output_limit",
    [SUB_RUNTIME_ERROR] = "runtime_error",
    [SUB_COMPILE_ERROR] = "compile_error",
    [SUB_INTERNAL_ERROR] = "internal_error",
    [SUB_CANCELLED] = "cancelled",
};

const char *status_name(enum sub_status s)
{
	return (unsigned)s < SUB_STATUS_COUNT ? names[s] : "internal_error";
}

int status_parse(const char *s, enum sub_status *out)
{
	for (int i = 0; i < SUB_STATUS_COUNT; i++)
		if (!strcmp(s, names[i])) {
			*out = (enum sub_status)i;
			return 0;
		}
	return -1;
}

bool status_is_final(enum sub_status s)
{
	return s != SUB_QUEUED && s != SUB_RUNNING;
}
