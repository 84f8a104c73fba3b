/* migrate: applies the embedded SQL migrations in order (`judge migrate` is cli/cmd_migrate.c).
 *
 * Concurrency: the whole run holds a session advisory lock, so two processes
 * migrating at once take turns and the second finds nothing left to do. Each
 * file runs in its own transaction together with its schema_migrations row:
 * a failing file leaves the schema at the previous version.
 */
#include "judge/store/migrate.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "judge/store/db.h"
#include "common/log.h"
#include "common/strbuf.h"

/* pg_advisory_lock key: "judge-mg" as a number, unlikely to clash */
#define MIGRATE_LOCK_KEY "6977265236766844519"

static int file_version(const struct migration_file *m)
{
	return atoi(m->name);
}

int migrate_latest_version(void)
{
	int v = 0;
	for (const struct migration_file *m = migration_files; m->name; m++)
		if (file_version(m) > v)
			v = file_version(m);
	return v;
}

static int exec_script(struct db *db, const char *sql, char *err, size_t errlen)
{
	/* PQexec, not PQexecParams: a migration file holds several statements */
	PGresult *r = PQexec(db_conn(db), sql);
	int ok = PQresultStatus(r) == PGRES_COMMAND_OK || PQresultStatus(r) == PGRES_TUPLES_OK;
	if (!ok) {
		const char *msg = r ? PQresultErrorMessage(r) : PQerrorMessage(db_conn(db));
		snprintf(err, errlen, "%.*s", (int)strcspn(msg, "\n"), msg);
	}
	PQclear(r);
	return ok ? 0 : -1;
}

/* Highest applied version (0 when none), or -1. */
static int applied_version(struct db *db, char *err, size_t errlen)
{
	PGresult *r =
	    db_query(db, "SELECT coalesce(max(version), 0) FROM schema_migrations", 0, NULL);
	if (!r) {
		snprintf(err, errlen, "cannot read schema_migrations: %s", db_error(db));
		return -1;
	}
	int v = (int)db_value_ll(r, 0, 0);
	PQclear(r);
	return v;
}

/* Returns 1 when version is recorded as applied, 0 when not, -1 (db_error). */
static int is_applied(struct db *db, int version)
{
	char v[16];
	snprintf(v, sizeof v, "%d", version);
	const char *p[] = {v};
	PGresult *r = db_query(db, "SELECT 1 FROM schema_migrations WHERE version = $1", 1, p);
	if (!r)
		return -1;
	int found = PQntuples(r) > 0;
	PQclear(r);
	return found;
}

int migrate_run(struct db *db, int *applied, char *err, size_t errlen)
{
	int ret = -1, locked = 0, count = 0;
	if (applied)
		*applied = 0;
	if (db_exec(db, "SELECT pg_advisory_lock(" MIGRATE_LOCK_KEY ")", 0, NULL) < 0) {
		snprintf(err, errlen, "cannot take the migration lock: %s", db_error(db));
		goto out;
	}
	locked = 1;
	if (db_exec(db,
		    "CREATE TABLE IF NOT EXISTS schema_migrations (version integer PRIMARY KEY, "
		    "name text NOT NULL, applied timestamptz NOT NULL DEFAULT now())",
		    0, NULL) < 0) {
		snprintf(err, errlen, "cannot create schema_migrations: %s", db_error(db));
		goto out;
	}
	int have = applied_version(db, err, errlen), latest = migrate_latest_version();
	if (have < 0)
		goto out;
	if (have > latest) {
		snprintf(err, errlen,
			 "the database schema is at version %d, newer than this judge's %d: "
			 "run a newer judge",
			 have, latest);
		goto out;
	}
	for (const struct migration_file *m = migration_files; m->name; m++) {
		int v = file_version(m);
		int done = is_applied(db, v);
		if (done < 0) {
			snprintf(err, errlen, "cannot read schema_migrations: %s", db_error(db));
			goto out;
		}
		if (done)
			continue;
		if (db_begin(db) < 0) {
			snprintf(err, errlen, "migration %s: %s", m->name, db_error(db));
			goto out;
		}
		char e[512];
		if (exec_script(db, m->sql, e, sizeof e) < 0) {
			db_rollback(db);
			snprintf(err, errlen, "migration %s failed: %s", m->name, e);
			goto out;
		}
		char vs[16];
		snprintf(vs, sizeof vs, "%d", v);
		const char *p[] = {vs, m->name};
		if (db_exec(db, "INSERT INTO schema_migrations (version, name) VALUES ($1, $2)", 2,
			    p) < 0 ||
		    db_commit(db) < 0) {
			snprintf(err, errlen, "migration %s: %s", m->name, db_error(db));
			db_rollback(db);
			goto out;
		}
		log_info("applied migration %s", m->name);
		count++;
	}
	if (applied)
		*applied = count;
	ret = 0;
out:
	if (locked)
		db_exec(db, "SELECT pg_advisory_unlock(" MIGRATE_LOCK_KEY ")", 0, NULL);
	return ret;
}

int migrate_check(struct db *db, char *err, size_t errlen)
{
	PGresult *r = db_query(db, "SELECT to_regclass('schema_migrations') IS NOT NULL", 0, NULL);
	if (!r) {
		snprintf(err, errlen, "cannot read the schema version: %s", db_error(db));
		return -1;
	}
	int exists = !strcmp(PQgetvalue(r, 0, 0), "t");
	PQclear(r);
	int have = exists ? applied_version(db, err, errlen) : 0;
	if (have < 0)
		return -1;
	int latest = migrate_latest_version();
	if (have < latest) {
		snprintf(err, errlen,
			 "the database schema is at version %d, this judge needs %d: "
			 "run 'judge migrate'",
			 have, latest);
		return -1;
	}
	if (have > latest) {
		snprintf(err, errlen,
			 "the database schema is at version %d, newer than this judge's %d: "
			 "run a newer judge",
			 have, latest);
		return -1;
	}
	return 0;
}
