/* log: levelled logging to stderr with a timestamp. */
#include "common/log.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "common/clock.h"

enum log_level log_min_level = LOG_INFO;

static const char *const level_names[] = {"debug", "info", "warn", "error"};

int log_parse_level(const char *s)
{
	for (int i = 0; i < 4; i++)
		if (!strcmp(s, level_names[i]))
			return i;
	return -1;
}

void log_write(enum log_level lvl, const char *fmt, ...)
{
	char line[2048];
	int64_t now_ms = clock_real_ms(); /* a timestamp for people: the realtime clock */
	time_t sec = (time_t)(now_ms / 1000);
	struct tm tm;
	gmtime_r(&sec, &tm);
	int n = snprintf(line, sizeof line, "%04d-%02d-%02dT%02d:%02d:%02d.%03ldZ %-5s ",
			 tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min,
			 tm.tm_sec, (long)(now_ms % 1000), level_names[lvl]);
	va_list ap;
	va_start(ap, fmt);
	if (n > 0 && (size_t)n < sizeof line)
		n += vsnprintf(line + n, sizeof line - (size_t)n, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if ((size_t)n >= sizeof line - 1)
		n = sizeof line - 2;
	line[n++] = '\n';
	/* one write keeps lines from different threads whole */
	fwrite(line, 1, (size_t)n, stderr);
}
