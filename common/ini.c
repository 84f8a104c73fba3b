/* ini: line-oriented parser with sections, comments and trimmed values. */
#include "common/ini.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char *trim(char *s)
{
	while (isspace((unsigned char)*s))
		s++;
	char *e = s + strlen(s);
	while (e > s && isspace((unsigned char)e[-1]))
		*--e = 0;
	return s;
}

int ini_parse_file(const char *path, ini_handler cb, void *ctx, char *err, size_t errlen)
{
	FILE *f = fopen(path, "re");
	if (!f) {
		snprintf(err, errlen, "cannot open '%s': %s", path, strerror(errno));
		return -1;
	}
	char section[64] = "";
	char *line = NULL;
	size_t cap = 0;
	int lineno = 0, ret = 0;
	char msg[512];
	while (getline(&line, &cap, f) >= 0) {
		lineno++;
		char *s = trim(line);
		if (!*s || *s == '#' || *s == ';')
			continue;
		if (*s == '[') {
			char *end = strchr(s, ']');
			if (!end || end[1] || (size_t)(end - s - 1) >= sizeof section) {
				snprintf(err, errlen, "%s:%d: bad section header", path, lineno);
				ret = -1;
				break;
			}
			*end = 0;
			snprintf(section, sizeof section, "%s", trim(s + 1));
			continue;
		}
		char *eq = strchr(s, '=');
		if (!eq) {
			snprintf(err, errlen, "%s:%d: expected 'key = value'", path, lineno);
			ret = -1;
			break;
		}
		*eq = 0;
		msg[0] = 0;
		if (cb(ctx, section, trim(s), trim(eq + 1), msg, sizeof msg) < 0) {
			snprintf(err, errlen, "%s:%d: %s", path, lineno, msg);
			ret = -1;
			break;
		}
	}
	free(line);
	fclose(f);
	return ret;
}
