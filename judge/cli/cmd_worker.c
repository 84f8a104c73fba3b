/* cmd_worker: `judge worker [--slots N] [--sandbox B]`, a grading process (service/worker.c). */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "common/config.h"
#include "common/strbuf.h"
#include "judge/cli/cmd.h"
#include "judge/service/worker.h"
#include "judge/store/db.h"
#include "judge/store/pgembed.h"

int cmd_worker(int argc, char **argv, struct judge_config *cfg)
{
	static const struct option longopts[] = {
	    {"slots", required_argument, NULL, 's'},
	    {"sandbox", required_argument, NULL, 'b'},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	struct worker_opts opts = {0};
	optind = 1;
	int c;
	while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		switch (c) {
		case 's': {
			char *end;
			opts.slots = strtol(optarg, &end, 10);
			if (*end || opts.slots < 1 || opts.slots > 1024) {
				fprintf(stderr, "judge worker: --slots needs 1..1024\n");
				return 2;
			}
			break;
		}
		case 'b':
			opts.sandbox = optarg;
			break;
		case 'h':
			printf("usage: judge worker [--slots N] [--sandbox gvisor|native|auto]\n"
			       "claims queued submissions and grades them until SIGTERM\n");
			return 0;
		default:
			return 2;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "judge worker: unexpected argument '%s'\n", argv[optind]);
		return 2;
	}
	struct strbuf url = STRBUF_INIT;
	struct pgembed *embed = NULL;
	char err[1024];
	/* with the embedded database, a lone worker starts it when nobody did */
	if (db_config_url(cfg, true, &url, &embed, err, sizeof err) < 0) {
		fprintf(stderr, "judge worker: %s\n", err);
		strbuf_release(&url);
		return 1;
	}
	opts.url = url.buf;
	int rc = worker_run(cfg, &opts);
	pgembed_stop(embed);
	if (rc == WORKER_RC_ABANDONED) {
		/* submissions still grading were handed back: end them with the process */
		fflush(NULL);
		_exit(0);
	}
	strbuf_release(&url);
	return rc;
}
