/* harness_typed: the C++ and C# harnesses (static types from the signature). */
#include <stdio.h>

#include "judge/grading/harness.h"

int harness_cpp(const char *prelude, const struct grade_request *req, struct strbuf *out, char *err,
		size_t errlen)
{
	(void)prelude, (void)req, (void)out;
	snprintf(err, errlen, "function problems are not supported in cpp yet");
	return -1;
}

int harness_csharp(const char *prelude, const struct grade_request *req, struct strbuf *out,
		   char *err, size_t errlen)
{
	(void)prelude, (void)req, (void)out;
	snprintf(err, errlen, "function problems are not supported in csharp yet");
	return -1;
}
