/* log: levelled logging to stderr; formatting is skipped below the level. */
#pragma once

enum log_level { LOG_DEBUG, LOG_INFO, LOG_WARN, LOG_ERROR };

extern enum log_level log_min_level;

/* Parses "debug", "info", "warn" or "error"; returns -1 when unknown. */
int log_parse_level(const char *s);
void log_write(enum log_level lvl, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#define log_at(lvl, ...)                                                                           \
	do {                                                                                       \
		if ((lvl) >= log_min_level)                                                        \
			log_write((lvl), __VA_ARGS__);                                             \
	} while (0)
#define log_debug(...) log_at(LOG_DEBUG, __VA_ARGS__)
#define log_info(...)  log_at(LOG_INFO, __VA_ARGS__)
#define log_warn(...)  log_at(LOG_WARN, __VA_ARGS__)
#define log_error(...) log_at(LOG_ERROR, __VA_ARGS__)
