/* migrate: the database schema, from the numbered SQL files in migrations/.
 *
 * The files are built into the binary (build/gen/migrations.c, generated from
 * migrations/NNNN_name.sql by common/embed.sh), so a deployed binary
 * carries exactly the schema it was written for. Applied versions are
 * recorded in schema_migrations (version, name, applied).
 */
#pragma once
#include <stddef.h>

struct db;

struct migration_file {
	const char *name; /* "0001_init" */
	const char *sql;
	size_t len; /* of sql */
};
/* Generated (common/embed.sh): the embedded migrations, sorted by name, ending
 * with a NULL name. */
extern const struct migration_file migration_files[];

/* Version of the newest migration built into the binary. */
int migrate_latest_version(void);
/* Applies the pending migrations in order, each in its own transaction,
 * holding a PostgreSQL advisory lock so two processes can run this at once.
 * Refuses (returns -1) a database whose schema is newer than the binary.
 * *applied (when non-NULL) receives the number applied now.
 * Returns 0 or -1 with a message in err. */
int migrate_run(struct db *db, int *applied, char *err, size_t errlen);
/* Checks that the schema is exactly the binary's: returns 0, or -1 with a
 * message in err ("run judge migrate", or "newer than this binary"). */
int migrate_check(struct db *db, char *err, size_t errlen);
