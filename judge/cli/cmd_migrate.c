/* cmd_migrate: `judge migrate [--status]`, the schema of database_url (or of the embedded cluster).
 */
#include <stdio.h>
#include <string.h>

#include "common/config.h"
#include "common/strbuf.h"
#include "judge/cli/cmd.h"
#include "judge/store/db.h"
#include "judge/store/migrate.h"
#include "judge/store/pgembed.h"

int cmd_migrate(int argc, char **argv, struct judge_config *cfg)
{
	int ret = 1, status = 0;
	struct strbuf url = STRBUF_INIT;
	struct pgembed *embed = NULL;
	struct db *db = NULL;
	char err[1024];
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--status")) {
			status = 1;
		} else {
			fprintf(stderr, "usage: judge migrate [--status]\n"
					"applies the pending database migrations; --status only "
					"reports the schema version\n");
			return strcmp(argv[i], "--help") ? 2 : 0;
		}
	}
	if (db_config_url(cfg, true, &url, &embed, err, sizeof err) < 0 ||
	    db_open(&db, url.buf, 30000, err, sizeof err) < 0) {
		fprintf(stderr, "judge migrate: %s\n", err);
		goto out;
	}
	if (status) {
		int rc = migrate_check(db, err, sizeof err);
		printf("%s\n", rc == 0 ? "schema up to date" : err);
		ret = rc == 0 ? 0 : 1;
		goto out;
	}
	int applied = 0;
	if (migrate_run(db, &applied, err, sizeof err) < 0) {
		fprintf(stderr, "judge migrate: %s\n", err);
		goto out;
	}
	printf("schema at version %d (%d migration%s applied)\n", migrate_latest_version(), applied,
	       applied == 1 ? "" : "s");
	ret = 0;
out:
	db_close(db);
	pgembed_stop(embed);
	strbuf_release(&url);
	return ret;
}
