/* cmd_keys: `judge keys create --name N [--admin] | list | revoke ID`, API key management. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "judge/service/auth.h"
#include "judge/cli/cmd.h"
#include "common/config.h"
#include "judge/store/db.h"
#include "judge/store/pgembed.h"
#include "common/strbuf.h"

static int usage(FILE *out)
{
	fputs("usage: judge keys create --name NAME [--admin]\n"
	      "                                       prints a new API key (shown only once);\n"
	      "                                       --admin: it may use /dashboard\n"
	      "       judge keys list                 lists keys (never the keys themselves)\n"
	      "       judge keys revoke ID            revokes key ID\n",
	      out);
	return out == stdout ? 0 : 2;
}

int cmd_keys(int argc, char **argv, struct judge_config *cfg)
{
	int ret = 1;
	char err[512];
	struct strbuf url = STRBUF_INIT;
	struct pgembed *embed = NULL;
	struct db *db = NULL;
	const char *name = NULL;
	long long revoke_id = 0;
	bool admin = false;

	if (argc < 2)
		return usage(stderr);
	const char *verb = argv[1];
	if (!strcmp(verb, "--help") || !strcmp(verb, "-h"))
		return usage(stdout);
	if (!strcmp(verb, "create")) {
		for (int i = 2; i < argc; i++) {
			if (!strcmp(argv[i], "--name") && i + 1 < argc)
				name = argv[++i];
			else if (!strncmp(argv[i], "--name=", 7))
				name = argv[i] + 7;
			else if (!strcmp(argv[i], "--admin"))
				admin = true;
			else
				return usage(stderr);
		}
		if (!name || !*name) {
			fputs("judge keys create: --name NAME is required\n", stderr);
			return 2;
		}
	} else if (!strcmp(verb, "revoke")) {
		char *end;
		if (argc != 3 || (revoke_id = strtoll(argv[2], &end, 10)) <= 0 || *end) {
			fputs(
			    "judge keys revoke: needs the numeric id of a key (judge keys list)\n",
			    stderr);
			return 2;
		}
	} else if (strcmp(verb, "list") || argc != 2) {
		return usage(stderr);
	}

	if (db_config_url(cfg, true, &url, &embed, err, sizeof err) < 0 ||
	    db_open(&db, url.buf, 10000, err, sizeof err) < 0) {
		fprintf(stderr, "judge keys: %s\n", err);
		goto out;
	}
	if (name) {
		char key[AUTH_KEY_LEN + 1];
		int64_t id;
		if (auth_key_create_as(db, name, admin, key, &id, err, sizeof err) < 0) {
			fprintf(stderr, "judge keys: %s\n", err);
			goto out;
		}
		fprintf(stderr, "created %skey %lld '%s'; it is shown only this once:\n",
			admin ? "admin " : "", (long long)id, name);
		printf("%s\n", key);
	} else if (revoke_id) {
		int rc = auth_key_revoke(db, revoke_id, err, sizeof err);
		if (rc < 0) {
			fprintf(stderr, "judge keys: %s\n", err);
			goto out;
		}
		if (rc == 0) {
			fprintf(stderr, "judge keys: no active key %lld\n", revoke_id);
			goto out;
		}
		printf("revoked key %lld\n", revoke_id);
	} else if (auth_key_list(db, stdout, err, sizeof err) < 0) {
		fprintf(stderr, "judge keys: %s\n", err);
		goto out;
	}
	ret = 0;
out:
	db_close(db);
	pgembed_stop(embed);
	strbuf_release(&url);
	return ret;
}
