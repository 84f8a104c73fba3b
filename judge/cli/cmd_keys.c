/* cmd_keys: `judge keys create --name N [--admin] [--weight W] | list | weight ID W |
 * egress ID MODE [RULES] | revoke ID`, API key management. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "judge/service/auth.h"
#include "judge/service/session/sessnet.h"
#include "judge/cli/cmd.h"
#include "common/config.h"
#include "judge/store/db.h"
#include "judge/store/pgembed.h"
#include "common/strbuf.h"

static int usage(FILE *out)
{
	fputs("usage: judge keys create --name NAME [--admin] [--weight W]\n"
	      "                                       prints a new API key (shown only once);\n"
	      "                                       --admin: it may use /dashboard;\n"
	      "                                       --weight: its share of the workers (1-1000,\n"
	      "                                       default 1; docs/operations.md)\n"
	      "       judge keys list                 lists keys (never the keys themselves)\n"
	      "       judge keys weight ID W          sets key ID's weight\n"
	      "       judge keys egress ID MODE [RULES]\n"
	      "                                       key ID's own egress cap, instead of\n"
	      "                                       judge.ini's: off, allowlist (RULES:\n"
	      "                                       host[:port],... or any name), open;\n"
	      "                                       default: judge.ini's (docs/egress.md)\n"
	      "       judge keys revoke ID            revokes key ID: its queued submissions\n"
	      "                                       are cancelled, its sessions closed\n",
	      out);
	return out == stdout ? 0 : 2;
}

/* A weight argument: AUTH_WEIGHT_MIN..MAX, or 0 when it is not one. */
static long parse_weight(const char *s)
{
	char *end;
	long w = strtol(s, &end, 10);
	return *s && !*end && w >= AUTH_WEIGHT_MIN && w <= AUTH_WEIGHT_MAX ? w : 0;
}

/* A key's egress cap from mode and rules (comma-separated, as judge.ini's
 * egress_allow; NULL: any name), normalized; NULL after saying why. */
static cJSON *keys_egress(const char *mode, const char *rules)
{
	struct sessnet_policy cap;
	char err[400];
	cJSON *in = cJSON_CreateObject(), *out = NULL;
	cJSON_AddStringToObject(in, "mode", mode);
	if (rules) {
		if (sessnet_cap_parse("allowlist", rules, &cap, err, sizeof err) < 0) {
			fprintf(stderr, "judge keys egress: %s\n", err);
			goto out;
		}
		cJSON *al = cJSON_AddArrayToObject(in, "allow");
		for (size_t i = 0; i < cap.nrules; i++) {
			char t[SESSNET_HOST_MAX + 8];
			cJSON_AddItemToArray(
			    al, cJSON_CreateString(sessnet_rule_text(&cap.rules[i], t, sizeof t)));
		}
	}
	if (sessnet_keycap_parse(in, &cap, err, sizeof err) < 0)
		fprintf(stderr, "judge keys egress: %s\n", err);
	else
		out = sessnet_cap_json(&cap);
out:
	cJSON_Delete(in);
	return out;
}

int cmd_keys(int argc, char **argv, struct judge_config *cfg)
{
	int ret = 1;
	char err[512];
	struct strbuf url = STRBUF_INIT;
	struct pgembed *embed = NULL;
	struct db *db = NULL;
	const char *name = NULL;
	long long revoke_id = 0, weight_id = 0, egress_id = 0;
	cJSON *egress = NULL;
	long weight = 0;
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
			else if (!strcmp(argv[i], "--weight") && i + 1 < argc &&
				 (weight = parse_weight(argv[++i])) > 0)
				;
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
	} else if (!strcmp(verb, "weight")) {
		char *end;
		if (argc != 4 || (weight_id = strtoll(argv[2], &end, 10)) <= 0 || *end ||
		    (weight = parse_weight(argv[3])) <= 0) {
			fprintf(stderr,
				"judge keys weight: needs the numeric id of a key and a "
				"weight from %d to %d\n",
				AUTH_WEIGHT_MIN, AUTH_WEIGHT_MAX);
			return 2;
		}
	} else if (!strcmp(verb, "egress")) {
		char *end;
		if (argc < 4 || argc > 5 || (egress_id = strtoll(argv[2], &end, 10)) <= 0 || *end ||
		    (!strcmp(argv[3], "default") && argc == 5)) {
			fputs("judge keys egress: needs the numeric id of a key and off, allowlist "
			      "[RULES], open or default\n",
			      stderr);
			return 2;
		}
		if (strcmp(argv[3], "default") &&
		    !(egress = keys_egress(argv[3], argc == 5 ? argv[4] : NULL)))
			return 2;
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
		if (weight && auth_key_set_weight(db, id, weight, err, sizeof err) < 0) {
			fprintf(stderr, "judge keys: %s\n", err);
			goto out;
		}
		fprintf(stderr, "created %skey %lld '%s'; it is shown only this once:\n",
			admin ? "admin " : "", (long long)id, name);
		printf("%s\n", key);
	} else if (weight_id) {
		int rc = auth_key_set_weight(db, weight_id, weight, err, sizeof err);
		if (rc <= 0) {
			if (rc == 0)
				fprintf(stderr, "judge keys: no key %lld\n", weight_id);
			else
				fprintf(stderr, "judge keys: %s\n", err);
			goto out;
		}
		printf("key %lld has weight %ld\n", weight_id, weight);
	} else if (egress_id) {
		int rc = auth_key_set_egress(db, egress_id, egress, err, sizeof err);
		if (rc <= 0) {
			if (rc == 0)
				fprintf(stderr, "judge keys: no active key %lld\n", egress_id);
			else
				fprintf(stderr, "judge keys: %s\n", err);
			goto out;
		}
		char *t = egress ? cJSON_PrintUnformatted(egress) : NULL;
		printf("key %lld has egress %s\n", egress_id, t ? t : "default (judge.ini's)");
		free(t);
	} else if (revoke_id) {
		struct auth_revoked ended = {0};
		int rc = auth_key_revoke(db, revoke_id, &ended, err, sizeof err);
		if (rc < 0) {
			fprintf(stderr, "judge keys: %s\n", err);
			goto out;
		}
		if (rc == 0) {
			fprintf(stderr, "judge keys: no active key %lld\n", revoke_id);
			goto out;
		}
		printf(
		    "revoked key %lld: %ld queued submission%s cancelled, %ld session%s closed\n",
		    revoke_id, ended.cancelled, ended.cancelled == 1 ? "" : "s", ended.sessions,
		    ended.sessions == 1 ? "" : "s");
	} else if (auth_key_list(db, stdout, err, sizeof err) < 0) {
		fprintf(stderr, "judge keys: %s\n", err);
		goto out;
	}
	ret = 0;
out:
	cJSON_Delete(egress);
	db_close(db);
	pgembed_stop(embed);
	strbuf_release(&url);
	return ret;
}
