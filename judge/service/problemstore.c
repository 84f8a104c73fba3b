/* problemstore: problem packages in PostgreSQL and the workers' copies (see problemstore.h). */
#define _GNU_SOURCE
#include "judge/service/problemstore.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/log.h"
#include "common/sha256.h"
#include "common/strbuf.h"
#include "common/xalloc.h"
#include "judge/grading/package.h"
#include "judge/service/queue.h"
#include "judge/store/db.h"

static void db_fail(struct db *db, const char *what, char *err, size_t errlen)
{
	snprintf(err, errlen, "%s: %s", what, db_error(db));
}

static bool may_see(const struct problemstore_actor *w, int64_t owner, bool is_public)
{
	return w->admin || is_public || (owner && owner == w->key_id);
}

static bool may_change(const struct problemstore_actor *w, int64_t owner)
{
	return w->admin || (owner && owner == w->key_id);
}

/* ---- put ---- */

static int write_all(int fd, const char *data, size_t len)
{
	while (len) {
		ssize_t w = write(fd, data, len);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		data += w;
		len -= (size_t)w;
	}
	return 0;
}

/* Reads up to len bytes (fewer only at the end of the file). Returns the
 * count or -1. */
static ssize_t read_full(int fd, char *buf, size_t len)
{
	size_t got = 0;
	while (got < len) {
		ssize_t n = read(fd, buf + got, len - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -1;
		if (n == 0)
			break;
		got += (size_t)n;
	}
	return (ssize_t)got;
}

/* Stores the blob of file f of the folder dir unless it is stored already
 * (inside the caller's transaction). Returns 0 or -1 with err. */
static int store_blob(struct db *db, const char *dir, const struct package_file *f, char *err,
		      size_t errlen)
{
	char size[24], chunks[24];
	long long nchunks = (f->size + PROBLEMSTORE_CHUNK - 1) / PROBLEMSTORE_CHUNK;
	snprintf(size, sizeof size, "%lld", (long long)f->size);
	snprintf(chunks, sizeof chunks, "%lld", nchunks);
	const char *p[] = {f->hash, size, chunks};
	PGresult *r = db_query(db,
			       "INSERT INTO problem_blobs (hash, size, chunks) VALUES ($1, "
			       "$2::bigint, $3::integer) ON CONFLICT DO NOTHING RETURNING 1",
			       3, p);
	if (!r) {
		db_fail(db, "cannot store a package", err, errlen);
		return -1;
	}
	bool fresh = PQntuples(r) == 1;
	PQclear(r);
	if (!fresh)
		return 0; /* stored by an earlier version, another problem, or in this one */
	int ret = -1;
	char *path = xasprintf("%s/%s", dir, f->path);
	char *buf = NULL;
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		snprintf(err, errlen, "cannot read '%s': %s", f->path, strerror(errno));
		goto out;
	}
	buf = xmalloc(PROBLEMSTORE_CHUNK);
	struct sha256 h;
	sha256_init(&h);
	int64_t total = 0;
	for (long long seq = 0; seq < nchunks; seq++) {
		ssize_t n = read_full(fd, buf, PROBLEMSTORE_CHUNK);
		if (n <= 0) {
			snprintf(err, errlen, "cannot read '%s': %s", f->path,
				 n < 0 ? strerror(errno) : "it shrank");
			goto out;
		}
		sha256_update(&h, buf, (size_t)n);
		total += n;
		char seqs[24];
		snprintf(seqs, sizeof seqs, "%lld", seq);
		const char *q[] = {f->hash, seqs, buf};
		const int lens[] = {-1, -1, (int)n};
		r = db_query_bin(db,
				 "INSERT INTO problem_chunks (hash, seq, data) VALUES ($1, "
				 "$2::integer, $3::bytea)",
				 3, q, lens, false);
		if (!r) {
			db_fail(db, "cannot store a package", err, errlen);
			goto out;
		}
		PQclear(r);
	}
	unsigned char d[32];
	char hex[65];
	sha256_final(&h, d);
	sha256_hex(d, hex);
	if (total != f->size || strcmp(hex, f->hash)) {
		snprintf(err, errlen, "'%s' changed while it was stored", f->path);
		goto out;
	}
	ret = 0;
out:
	if (fd >= 0)
		close(fd);
	free(buf);
	free(path);
	return ret;
}

/* The problems row of id locked for the transaction: 1 with its owner,
 * visibility and retired state, 0 when none, -1 with err. */
static int lock_problem(struct db *db, const char *id, int64_t *owner, bool *is_public,
			bool *retired, char *err, size_t errlen)
{
	const char *p[] = {id};
	PGresult *r = db_query(db,
			       "SELECT coalesce(api_key_id, 0), visibility = 'public', retired IS "
			       "NOT NULL FROM problems WHERE id = $1 FOR UPDATE",
			       1, p);
	if (!r) {
		db_fail(db, "cannot read problem", err, errlen);
		return -1;
	}
	int found = PQntuples(r) == 1;
	if (found) {
		*owner = db_value_ll(r, 0, 0);
		*is_public = !strcmp(db_value(r, 0, 1), "t");
		*retired = !strcmp(db_value(r, 0, 2), "t");
	}
	PQclear(r);
	return found;
}

/* The version of id whose content is hash when it is current or being
 * verified: 1 with *version and *job (its verification while it runs, else
 * 0), 0 when none, -1 with err. */
static int same_version(struct db *db, const char *id, const char *hash, int *version, int64_t *job,
			char *err, size_t errlen)
{
	const char *p[] = {id, hash};
	PGresult *r =
	    db_query(db,
		     "SELECT v.version, CASE WHEN v.status = 'verifying' THEN v.verification "
		     "ELSE 0 END FROM problem_versions "
		     "v JOIN problems p ON p.id = v.problem_id WHERE v.problem_id = $1 "
		     "AND v.hash = $2 AND (v.status = 'verifying' OR v.version = "
		     "p.current_version) ORDER BY v.version DESC LIMIT 1",
		     2, p);
	if (!r) {
		db_fail(db, "cannot read problem versions", err, errlen);
		return -1;
	}
	int found = PQntuples(r) == 1;
	if (found) {
		*version = (int)db_value_ll(r, 0, 0);
		*job = db_value_ll(r, 0, 1);
	}
	PQclear(r);
	return found;
}

/* The access decision of a put on an existing problem. */
static int put_existing(const struct problemstore_put *in, int64_t owner, bool is_public,
			bool retired)
{
	if (in->import)
		return owner == 0 ? PS_DONE : PS_TAKEN;
	if (!may_see(&in->who, owner, is_public))
		return in->replace ? PS_NOT_FOUND : PS_TAKEN;
	if (!may_change(&in->who, owner))
		return in->replace ? PS_FORBIDDEN : PS_TAKEN;
	/* a POST revives its owner's retired problem; else the id is taken */
	if (!in->replace && !retired)
		return PS_TAKEN;
	return PS_DONE;
}

/* Queues the verification job of version of id (in the transaction).
 * Returns 0 with *job, or -1 with err. */
static int queue_verification(struct db *db, const struct problemstore_put *in, int version,
			      int64_t *job, char *err, size_t errlen)
{
	cJSON *req = cJSON_CreateObject();
	cJSON_AddStringToObject(req, "problem", in->id);
	cJSON_AddNumberToObject(req, "problem_version", version);
	cJSON *v = cJSON_AddObjectToObject(req, "verify");
	cJSON_AddBoolToObject(v, "keep", in->keep);
	struct queue_new qn = {
	    .request = req, .priority = QUEUE_PRIO_INTERACTIVE, .api_key_id = in->who.key_id};
	int rc = queue_enqueue(db, &qn, job, NULL, err, errlen);
	cJSON_Delete(req);
	return rc;
}

/* Everything of a put after the access check, in its transaction. */
static int put_version(struct db *db, const struct problemstore_put *in, int *version, int64_t *job,
		       char *err, size_t errlen)
{
	const struct package *pk = in->pk;
	for (int i = 0; i < pk->nfiles; i++)
		if (store_blob(db, pk->dir, &pk->files[i], err, errlen) < 0)
			return -1;
	const char *p[] = {in->id};
	PGresult *r = db_query(
	    db, "SELECT coalesce(max(version), 0) + 1 FROM problem_versions WHERE problem_id = $1",
	    1, p);
	if (!r) {
		db_fail(db, "cannot read problem versions", err, errlen);
		return -1;
	}
	*version = (int)db_value_ll(r, 0, 0);
	PQclear(r);
	*job = 0;
	if (in->verify && queue_verification(db, in, *version, job, err, errlen) < 0)
		return -1;
	cJSON *man = package_manifest_json(pk->files, pk->nfiles);
	char *files = cJSON_PrintUnformatted(man);
	char *info = cJSON_PrintUnformatted(in->info);
	cJSON_Delete(man);
	char vs[24], keys[24], jobs[24];
	snprintf(vs, sizeof vs, "%d", *version);
	snprintf(keys, sizeof keys, "%" PRId64, in->who.key_id);
	snprintf(jobs, sizeof jobs, "%" PRId64, *job);
	const char *q[] = {in->id,
			   vs,
			   pk->hash,
			   files,
			   info,
			   in->verify ? "verifying" : "ready",
			   in->keep ? "true" : "false",
			   in->import ? "dir" : "upload",
			   keys,
			   jobs};
	r = db_query(
	    db,
	    "INSERT INTO problem_versions (problem_id, version, hash, files, info, status, "
	    "keep, source, api_key_id, verification) VALUES ($1, $2::integer, $3, "
	    "$4::jsonb, $5::jsonb, $6, $7::boolean, $8, nullif($9::bigint, 0), "
	    "nullif($10::bigint, 0))",
	    10, q);
	free(files);
	free(info);
	if (!r) {
		db_fail(db, "cannot store the problem version", err, errlen);
		return -1;
	}
	PQclear(r);
	if (!in->verify &&
	    db_exec(db, "UPDATE problems SET current_version = $2::integer WHERE id = $1", 2,
		    (const char *[]){in->id, vs}) < 0) {
		db_fail(db, "cannot store the problem version", err, errlen);
		return -1;
	}
	return 0;
}

int problemstore_may_put(struct db *db, const struct problemstore_put *in, char *err, size_t errlen)
{
	const char *p[] = {in->id};
	PGresult *r = db_query(db,
			       "SELECT coalesce(api_key_id, 0), visibility = 'public', retired IS "
			       "NOT NULL FROM problems WHERE id = $1",
			       1, p);
	if (!r) {
		db_fail(db, "cannot read problem", err, errlen);
		return -1;
	}
	int ret = in->replace ? PS_NOT_FOUND : PS_DONE;
	if (PQntuples(r) == 1)
		ret = put_existing(in, db_value_ll(r, 0, 0), !strcmp(db_value(r, 0, 1), "t"),
				   !strcmp(db_value(r, 0, 2), "t"));
	PQclear(r);
	return ret;
}

int problemstore_put(struct db *db, const struct problemstore_put *in, int *version, int64_t *job,
		     char *err, size_t errlen)
{
	int ret = -1;
	int64_t owner = 0;
	bool is_public = false, retired = false;
	*version = 0;
	*job = 0;
	if (db_begin(db) < 0) {
		db_fail(db, "cannot store a problem", err, errlen);
		return -1;
	}
	int found = lock_problem(db, in->id, &owner, &is_public, &retired, err, errlen);
	if (found < 0)
		goto fail;
	if (!found) {
		if (in->replace) {
			ret = PS_NOT_FOUND;
			goto fail;
		}
		char keys[24];
		snprintf(keys, sizeof keys, "%" PRId64, in->who.key_id);
		const char *p[] = {in->id, keys,
				   in->import	    ? "public"
				   : in->visibility ? in->visibility
						    : "private"};
		PGresult *r = db_query(db,
				       "INSERT INTO problems (id, api_key_id, visibility) VALUES "
				       "($1, nullif($2::bigint, 0), $3) ON CONFLICT DO NOTHING "
				       "RETURNING 1",
				       3, p);
		if (!r) {
			db_fail(db, "cannot store a problem", err, errlen);
			goto fail;
		}
		bool inserted = PQntuples(r) == 1;
		PQclear(r);
		if (!inserted) { /* a POST of the same id at the same time */
			ret = PS_TAKEN;
			goto fail;
		}
	} else if ((ret = put_existing(in, owner, is_public, retired)) != PS_DONE) {
		goto fail;
	}
	int rc = same_version(db, in->id, in->pk->hash, version, job, err, errlen);
	if (rc < 0 || (rc == 0 && put_version(db, in, version, job, err, errlen) < 0)) {
		ret = -1;
		goto fail;
	}
	/* a put (not problems_dir's load) revives a retired problem */
	const char *p[] = {in->id, in->import ? NULL : in->visibility,
			   in->import ? "false" : "true"};
	if (db_exec(db,
		    "UPDATE problems SET visibility = coalesce($2, visibility), retired = CASE "
		    "WHEN $3::boolean THEN NULL ELSE retired END WHERE id = $1",
		    3, p) < 0) {
		db_fail(db, "cannot store a problem", err, errlen);
		ret = -1;
		goto fail;
	}
	if (db_commit(db) < 0) {
		db_fail(db, "cannot store a problem", err, errlen);
		return -1;
	}
	return rc == 1 ? PS_SAME : PS_DONE;
fail:
	db_rollback(db);
	return ret;
}

/* ---- reading ---- */

int problemstore_resolve(struct db *db, const char *id, const struct problemstore_actor *who,
			 int *version, char **unsupported, char *err, size_t errlen)
{
	*unsupported = NULL;
	const char *p[] = {id};
	PGresult *r = db_query(
	    db,
	    "SELECT p.current_version, coalesce(p.api_key_id, 0), p.visibility = 'public', "
	    "v.info ->> 'unsupported' FROM problems p JOIN problem_versions v ON "
	    "v.problem_id = p.id AND v.version = p.current_version WHERE p.id = $1 AND "
	    "p.retired IS NULL",
	    1, p);
	if (!r) {
		db_fail(db, "cannot read problem", err, errlen);
		return -1;
	}
	int ret = 0;
	if (PQntuples(r) == 1 &&
	    may_see(who, db_value_ll(r, 0, 1), !strcmp(db_value(r, 0, 2), "t"))) {
		*version = (int)db_value_ll(r, 0, 0);
		if (db_value(r, 0, 3))
			*unsupported = xstrdup(db_value(r, 0, 3));
		ret = 1;
	}
	PQclear(r);
	return ret;
}

/* The visibility fields of a problem: visibility, and mine (it is who's). */
static void add_access(cJSON *o, const struct problemstore_actor *who, int64_t owner,
		       const char *visibility)
{
	cJSON_AddStringToObject(o, "visibility", visibility);
	cJSON_AddBoolToObject(o, "mine", owner ? owner == who->key_id : who->key_id == 0);
}

/* Adds a jsonb field's text parsed (or null). */
static void add_json(cJSON *o, const char *name, const char *text)
{
	cJSON *j = text ? cJSON_Parse(text) : NULL;
	if (j)
		cJSON_AddItemToObject(o, name, j);
	else
		cJSON_AddNullToObject(o, name);
}

#define VERSIONS_JSON                                                                              \
	"(SELECT json_agg(json_build_object('version', x.version, 'status', x.status, "            \
	"'source', x.source, 'hash', x.hash, 'created_ms', (extract(epoch FROM x.created) * "      \
	"1000)::bigint) ORDER BY x.version) FROM problem_versions x WHERE x.problem_id = p.id)"

int problemstore_list(struct db *db, const struct problemstore_actor *who, cJSON **out, char *err,
		      size_t errlen)
{
	char keys[24];
	snprintf(keys, sizeof keys, "%" PRId64, who->key_id);
	const char *p[] = {keys, who->admin ? "true" : "false"};
	/* the name and kind come from the current version, else the newest */
	PGresult *r = db_query(
	    db,
	    "SELECT p.id, coalesce(p.api_key_id, 0), p.visibility, p.current_version, "
	    "v.info ->> 'name', v.info ->> 'unsupported', " VERSIONS_JSON
	    " FROM problems p LEFT JOIN LATERAL (SELECT info FROM problem_versions y WHERE "
	    "y.problem_id = p.id ORDER BY y.version = p.current_version DESC, y.version DESC "
	    "LIMIT 1) v ON true WHERE p.retired IS NULL AND ($2::boolean OR p.visibility = "
	    "'public' OR p.api_key_id = $1::bigint) ORDER BY p.id",
	    2, p);
	if (!r) {
		db_fail(db, "cannot list problems", err, errlen);
		return -1;
	}
	cJSON *arr = cJSON_CreateArray();
	for (int i = 0; i < PQntuples(r); i++) {
		cJSON *o = cJSON_CreateObject();
		const char *id = db_value(r, i, 0), *name = db_value(r, i, 4);
		cJSON_AddStringToObject(o, "id", id);
		cJSON_AddStringToObject(o, "name", name ? name : id);
		bool ready = db_value(r, i, 3) != NULL;
		cJSON_AddBoolToObject(o, "supported", ready && !db_value(r, i, 5));
		add_access(o, who, db_value_ll(r, i, 1), db_value(r, i, 2));
		if (ready)
			cJSON_AddNumberToObject(o, "version", (double)db_value_ll(r, i, 3));
		else
			cJSON_AddNullToObject(o, "version");
		add_json(o, "versions", db_value(r, i, 6));
		cJSON_AddItemToArray(arr, o);
	}
	PQclear(r);
	*out = arr;
	return 0;
}

int problemstore_get(struct db *db, const char *id, int version,
		     const struct problemstore_actor *who, cJSON **out, char *err, size_t errlen)
{
	char vs[24];
	snprintf(vs, sizeof vs, "%d", version);
	const char *p[] = {id, vs};
	PGresult *r = db_query(
	    db,
	    "SELECT coalesce(p.api_key_id, 0), p.visibility, p.current_version, p.retired IS NOT "
	    "NULL, v.version, v.status, v.info, v.report, v.hash, v.keep, v.source, "
	    "v.verification, v.time_limit_ms, " VERSIONS_JSON
	    " FROM problems p JOIN LATERAL (SELECT * FROM problem_versions y WHERE y.problem_id "
	    "= p.id AND ($2::integer = 0 OR y.version = $2::integer) ORDER BY y.version = "
	    "p.current_version DESC, y.version DESC LIMIT 1) v ON true WHERE p.id = $1",
	    2, p);
	if (!r) {
		db_fail(db, "cannot read problem", err, errlen);
		return -1;
	}
	int ret = 0;
	if (PQntuples(r) != 1)
		goto out;
	int64_t owner = db_value_ll(r, 0, 0);
	bool is_public = !strcmp(db_value(r, 0, 1), "public");
	bool retired = !strcmp(db_value(r, 0, 3), "t");
	if (!may_see(who, owner, is_public) || (retired && !may_change(who, owner)))
		goto out;
	cJSON *o = cJSON_Parse(db_value(r, 0, 6));
	if (!cJSON_IsObject(o)) {
		cJSON_Delete(o);
		o = cJSON_CreateObject();
	}
	/* the stored info first (name, statement, samples ...), then the state */
	cJSON_DeleteItemFromObjectCaseSensitive(o, "id");
	cJSON_AddItemToObject(o, "id", cJSON_CreateString(id));
	cJSON_AddBoolToObject(o, "supported",
			      db_value(r, 0, 2) && !cJSON_GetObjectItem(o, "unsupported"));
	add_access(o, who, owner, db_value(r, 0, 1));
	if (retired)
		cJSON_AddBoolToObject(o, "retired", true);
	if (db_value(r, 0, 2))
		cJSON_AddNumberToObject(o, "current_version", (double)db_value_ll(r, 0, 2));
	else
		cJSON_AddNullToObject(o, "current_version");
	cJSON_AddNumberToObject(o, "version", (double)db_value_ll(r, 0, 4));
	cJSON_AddStringToObject(o, "status", db_value(r, 0, 5));
	cJSON_AddStringToObject(o, "hash", db_value(r, 0, 8));
	cJSON_AddBoolToObject(o, "keep", !strcmp(db_value(r, 0, 9), "t"));
	cJSON_AddStringToObject(o, "source", db_value(r, 0, 10));
	/* a limit verification inferred is the one the grader applies */
	cJSON *lim = cJSON_GetObjectItemCaseSensitive(o, "limits");
	if (cJSON_IsObject(lim) && db_value(r, 0, 12)) {
		cJSON_DeleteItemFromObjectCaseSensitive(lim, "time_ms");
		cJSON_AddNumberToObject(lim, "time_ms", (double)db_value_ll(r, 0, 12));
	}
	cJSON *ver = cJSON_AddObjectToObject(o, "verification");
	if (db_value(r, 0, 11))
		cJSON_AddNumberToObject(ver, "id", (double)db_value_ll(r, 0, 11));
	else
		cJSON_AddNullToObject(ver, "id");
	add_json(ver, "report", db_value(r, 0, 7));
	add_json(o, "versions", db_value(r, 0, 13));
	*out = o;
	ret = 1;
out:
	PQclear(r);
	return ret;
}

/* Locks id's row and decides whether who may change it (in a transaction).
 * Returns PS_DONE, PS_NOT_FOUND, PS_FORBIDDEN or -1. */
static int lock_for_change(struct db *db, const char *id, const struct problemstore_actor *who,
			   char *err, size_t errlen)
{
	int64_t owner = 0;
	bool is_public = false, retired = false;
	int found = lock_problem(db, id, &owner, &is_public, &retired, err, errlen);
	if (found <= 0)
		return found < 0 ? -1 : PS_NOT_FOUND;
	if (!may_see(who, owner, is_public) || (retired && !may_change(who, owner)))
		return PS_NOT_FOUND;
	return may_change(who, owner) ? PS_DONE : PS_FORBIDDEN;
}

/* Runs sql ($1 = id, $2 = arg unless arg is NULL) on id when who may change it. */
static int change(struct db *db, const char *id, const struct problemstore_actor *who,
		  const char *sql, const char *arg, char *err, size_t errlen)
{
	if (db_begin(db) < 0) {
		db_fail(db, "cannot change a problem", err, errlen);
		return -1;
	}
	int rc = lock_for_change(db, id, who, err, errlen);
	if (rc != PS_DONE) {
		db_rollback(db);
		return rc;
	}
	const char *p[] = {id, arg};
	if (db_exec(db, sql, arg ? 2 : 1, p) < 0 || db_commit(db) < 0) {
		db_fail(db, "cannot change a problem", err, errlen);
		db_rollback(db);
		return -1;
	}
	return PS_DONE;
}

int problemstore_set_visibility(struct db *db, const char *id, const struct problemstore_actor *who,
				const char *visibility, char *err, size_t errlen)
{
	return change(db, id, who, "UPDATE problems SET visibility = $2 WHERE id = $1", visibility,
		      err, errlen);
}

int problemstore_retire(struct db *db, const char *id, const struct problemstore_actor *who,
			char *err, size_t errlen)
{
	return change(db, id, who,
		      "UPDATE problems SET retired = coalesce(retired, now()) WHERE id = $1", NULL,
		      err, errlen);
}

/* ---- the worker's copies ---- */

/* Fetches blob f into the new file f->path under dirfd, checking its size and
 * hash. Returns 0 or -1 with err. */
static int fetch_file(struct db *db, int dirfd, const struct package_file *f, char *err,
		      size_t errlen)
{
	const char *p[] = {f->hash};
	PGresult *r = db_query(db, "SELECT chunks FROM problem_blobs WHERE hash = $1", 1, p);
	if (!r) {
		db_fail(db, "cannot read a package", err, errlen);
		return -1;
	}
	if (PQntuples(r) != 1) {
		PQclear(r);
		snprintf(err, errlen, "the content of '%s' is missing from the database", f->path);
		return -1;
	}
	long long nchunks = db_value_ll(r, 0, 0);
	PQclear(r);
	int fd = package_create_file(dirfd, f->path, err, errlen);
	if (fd < 0)
		return -1;
	int ret = -1;
	struct sha256 h;
	sha256_init(&h);
	int64_t total = 0;
	for (long long seq = 0; seq < nchunks; seq++) {
		char seqs[24];
		snprintf(seqs, sizeof seqs, "%lld", seq);
		const char *q[] = {f->hash, seqs};
		r = db_query_bin(db,
				 "SELECT data FROM problem_chunks WHERE hash = $1 AND seq = "
				 "$2::integer",
				 2, q, NULL, true);
		if (!r) {
			db_fail(db, "cannot read a package", err, errlen);
			goto out;
		}
		if (PQntuples(r) != 1) {
			PQclear(r);
			snprintf(err, errlen, "part %lld of '%s' is missing from the database", seq,
				 f->path);
			goto out;
		}
		const char *data = PQgetvalue(r, 0, 0);
		int len = PQgetlength(r, 0, 0);
		sha256_update(&h, data, (size_t)len);
		total += len;
		int wr = write_all(fd, data, (size_t)len);
		PQclear(r);
		if (wr < 0) {
			snprintf(err, errlen, "cannot write '%s': %s", f->path, strerror(errno));
			goto out;
		}
	}
	unsigned char d[32];
	char hex[65];
	sha256_final(&h, d);
	sha256_hex(d, hex);
	if (total != f->size || strcmp(hex, f->hash)) {
		snprintf(err, errlen, "'%s' does not match its hash in the database", f->path);
		goto out;
	}
	ret = 0;
out:
	if (close(fd) < 0 && ret == 0) {
		snprintf(err, errlen, "cannot write '%s': %s", f->path, strerror(errno));
		ret = -1;
	}
	return ret;
}

/* Writes the files of the manifest text into the new folder tmp and checks
 * them against the package hash. *bytes gets their size. Returns 0 or -1. */
static int fetch_package(struct db *db, const char *files_json, const char *hash, const char *tmp,
			 int64_t *bytes, char *err, size_t errlen)
{
	struct package_file *files = NULL;
	cJSON *man = cJSON_Parse(files_json);
	int n = package_manifest_parse(man, &files, err, errlen);
	cJSON_Delete(man);
	if (n < 0)
		return -1;
	int ret = -1, dirfd = -1;
	char got[65];
	package_hash(files, n, got);
	if (strcmp(got, hash)) {
		snprintf(err, errlen, "the manifest does not match the package's hash");
		goto out;
	}
	if (mkdir(tmp, 0755) < 0 ||
	    (dirfd = open(tmp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0) {
		snprintf(err, errlen, "cannot create '%s': %s", tmp, strerror(errno));
		goto out;
	}
	*bytes = 0;
	for (int i = 0; i < n; i++) {
		if (fetch_file(db, dirfd, &files[i], err, errlen) < 0)
			goto out;
		*bytes += files[i].size;
	}
	ret = 0;
out:
	if (dirfd >= 0)
		close(dirfd);
	package_files_free(files, n);
	return ret;
}

static bool is_dir(const char *path)
{
	struct stat st;
	return lstat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* Gets the copy of hash into dir when missing, holding the lock exclusively.
 * Returns 0 or -1 with err. */
static int fill(struct db *db, const char *id, int version, const char *root, const char *hash,
		int lock_fd, char *err, size_t errlen)
{
	char vs[24];
	snprintf(vs, sizeof vs, "%d", version);
	const char *p[] = {id, vs};
	PGresult *r = db_query(
	    db,
	    "SELECT files FROM problem_versions WHERE problem_id = $1 AND version = $2::integer", 2,
	    p);
	if (!r) {
		db_fail(db, "cannot read a package", err, errlen);
		return -1;
	}
	if (PQntuples(r) != 1) {
		PQclear(r);
		snprintf(err, errlen, "version %d of problem '%s' is gone", version, id);
		return -1;
	}
	char *tmp = xasprintf("%s/%s.tmp.%d", root, hash, (int)getpid());
	char *dir = xasprintf("%s/%s", root, hash);
	int64_t bytes = 0;
	package_rmtree(tmp); /* a crashed fetch of this process id */
	int ret = fetch_package(db, db_value(r, 0, 0), hash, tmp, &bytes, err, errlen);
	PQclear(r);
	if (ret == 0 && rename(tmp, dir) < 0) {
		snprintf(err, errlen, "cannot rename '%s': %s", tmp, strerror(errno));
		ret = -1;
	}
	if (ret < 0)
		package_rmtree(tmp);
	else {
		/* the lock file holds the copy's size for the trimming */
		char text[32];
		int len = snprintf(text, sizeof text, "%lld\n", (long long)bytes);
		if (ftruncate(lock_fd, 0) < 0 || pwrite(lock_fd, text, (size_t)len, 0) != len)
			log_warn("problems: cannot write the size of copy %s", hash);
		log_info("problems: copied %s version %d (%lld bytes) into %s", id, version,
			 (long long)bytes, dir);
	}
	free(tmp);
	free(dir);
	return ret;
}

struct copy_entry {
	char hash[65];
	int64_t bytes;
	int64_t used; /* mtime of its lock file: last use */
};

static int by_use(const void *a, const void *b)
{
	const struct copy_entry *x = a, *y = b;
	return x->used < y->used ? -1 : x->used > y->used;
}

/* Removes the least recently used copies (not in use: no lock held) until the
 * copies take at most cap_bytes. */
static void trim(const char *root, int64_t cap_bytes)
{
	DIR *d = opendir(root);
	if (!d)
		return;
	struct copy_entry *e = NULL;
	int n = 0, cap = 0;
	int64_t total = 0;
	struct dirent *de;
	while ((de = readdir(d))) {
		size_t len = strlen(de->d_name);
		if (len != 64 + 5 || strcmp(de->d_name + 64, ".lock"))
			continue;
		char path[4096];
		snprintf(path, sizeof path, "%s/%.64s", root, de->d_name);
		if (!is_dir(path))
			continue;
		char lpath[4096], text[32] = "";
		snprintf(lpath, sizeof lpath, "%s/%s", root, de->d_name);
		struct stat st;
		int fd = open(lpath, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0 || fstat(fd, &st) < 0) {
			if (fd >= 0)
				close(fd);
			continue;
		}
		ssize_t got = read(fd, text, sizeof text - 1);
		close(fd);
		if (n == cap) {
			cap = cap ? cap * 2 : 16;
			e = xreallocarray(e, (size_t)cap, sizeof *e);
		}
		snprintf(e[n].hash, sizeof e[n].hash, "%.64s", de->d_name);
		e[n].bytes = got > 0 ? strtoll(text, NULL, 10) : 0;
		e[n].used = (int64_t)st.st_mtime;
		total += e[n].bytes;
		n++;
	}
	closedir(d);
	if (total > cap_bytes && n > 0)
		qsort(e, (size_t)n, sizeof *e, by_use);
	for (int i = 0; i < n && total > cap_bytes; i++) {
		char lpath[4096], dir[4096];
		snprintf(lpath, sizeof lpath, "%s/%s.lock", root, e[i].hash);
		snprintf(dir, sizeof dir, "%s/%s", root, e[i].hash);
		int fd = open(lpath, O_RDWR | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0)
			continue;
		/* in use (a shared lock held): kept */
		if (flock(fd, LOCK_EX | LOCK_NB) == 0 && is_dir(dir)) {
			int rc = package_rmtree(dir);
			if (rc == 0) {
				total -= e[i].bytes;
				log_info(
				    "problems: removed the copy %s (%lld bytes, least recently "
				    "used)",
				    e[i].hash, (long long)e[i].bytes);
			} else {
				log_warn("problems: cannot remove '%s': %s", dir, strerror(-rc));
			}
		}
		close(fd);
	}
	free(e);
}

int problemstore_checkout(struct db *db, const char *cache_root, long cache_mb, const char *id,
			  int version, struct problemstore_copy *c, char *err, size_t errlen)
{
	memset(c, 0, sizeof *c);
	c->lock_fd = -1;
	char vs[24];
	snprintf(vs, sizeof vs, "%d", version);
	const char *p[] = {id, vs};
	PGresult *r = db_query(db,
			       "SELECT hash, coalesce(time_limit_ms, 0) FROM problem_versions "
			       "WHERE problem_id = $1 AND version = $2::integer",
			       2, p);
	if (!r) {
		db_fail(db, "cannot read a problem version", err, errlen);
		return -1;
	}
	if (PQntuples(r) != 1) {
		PQclear(r);
		return 0;
	}
	snprintf(c->hash, sizeof c->hash, "%s", db_value(r, 0, 0));
	c->time_limit_ms = (long)db_value_ll(r, 0, 1);
	PQclear(r);
	if (strlen(c->hash) != 64 || strspn(c->hash, "0123456789abcdef") != 64) {
		snprintf(err, errlen, "version %d of problem '%s' has no valid hash", version, id);
		return -1;
	}
	if (mkdir(cache_root, 0755) < 0 && errno != EEXIST) {
		snprintf(err, errlen, "cannot create '%s': %s", cache_root, strerror(errno));
		return -1;
	}
	char *lpath = xasprintf("%s/%s.lock", cache_root, c->hash);
	c->dir = xasprintf("%s/%s", cache_root, c->hash);
	c->lock_fd = open(lpath, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0644);
	free(lpath);
	if (c->lock_fd < 0) {
		snprintf(err, errlen, "cannot open the lock of '%s': %s", c->dir, strerror(errno));
		goto fail;
	}
	/* shared while in use; exclusive to fill. The change between the two is
	 * not atomic: check the copy again under each shared lock */
	for (int tries = 0;; tries++) {
		if (flock(c->lock_fd, LOCK_SH) < 0) {
			snprintf(err, errlen, "cannot lock '%s': %s", c->dir, strerror(errno));
			goto fail;
		}
		if (is_dir(c->dir))
			break;
		if (tries >= 3) {
			snprintf(err, errlen, "the copy '%s' keeps being removed", c->dir);
			goto fail;
		}
		if (flock(c->lock_fd, LOCK_EX) < 0) {
			snprintf(err, errlen, "cannot lock '%s': %s", c->dir, strerror(errno));
			goto fail;
		}
		if (!is_dir(c->dir) &&
		    fill(db, id, version, cache_root, c->hash, c->lock_fd, err, errlen) < 0)
			goto fail;
	}
	futimens(c->lock_fd, NULL); /* last use, for the trimming */
	if (cache_mb > 0)
		trim(cache_root, (int64_t)cache_mb << 20);
	return 1;
fail:
	problemstore_copy_release(c);
	return -1;
}

void problemstore_copy_release(struct problemstore_copy *c)
{
	if (!c)
		return;
	if (c->lock_fd >= 0)
		close(c->lock_fd);
	free(c->dir);
	memset(c, 0, sizeof *c);
	c->lock_fd = -1;
}
