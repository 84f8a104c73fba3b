/* cmd_serve: `judge serve [--listen HOST:PORT]`, the HTTP API process (api/serve.c). */
#include <stdio.h>
#include <string.h>

#include "common/config.h"
#include "judge/api/serve.h"
#include "judge/cli/cmd.h"

int cmd_serve(int argc, char **argv, struct judge_config *cfg)
{
	char err[256];
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--listen") && i + 1 < argc) {
			if (config_set(cfg, "listen", argv[++i], err, sizeof err) < 0) {
				fprintf(stderr, "judge serve: %s\n", err);
				return 2;
			}
		} else if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			puts("usage: judge serve [--listen HOST:PORT]\n\n"
			     "Serves the HTTP API on listen (judge.ini). The database must be up.");
			return 0;
		} else {
			fprintf(stderr, "judge serve: unknown argument '%s'\n", argv[i]);
			return 2;
		}
	}
	return serve_main(cfg);
}
