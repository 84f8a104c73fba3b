/* problemstore: problem packages in PostgreSQL (migrations/0011_problems.sql)
 * and each worker's local copy of them (docs/problems.md).
 *
 * How it works: a package's files are blobs keyed by their SHA-256, stored
 * once in chunks of PROBLEMSTORE_CHUNK bytes however many versions hold them.
 * problemstore_put writes the blobs, a version row (its manifest, the
 * package's content hash, what GET shows) and, for an upload, a verification
 * job (a submission whose request holds "verify"), all in one transaction;
 * the job's end settles the version by a trigger (ready, refused, failed) and
 * makes a ready version current. A submission is pinned to the current
 * version when it is queued (problemstore_resolve); the worker grades it on
 * problemstore_checkout's copy of that version: state_dir/problems/<hash>/,
 * fetched from the database when missing (file by file, every file's hash and
 * the package's checked), so a worker with an empty disk grades any problem.
 * The copies are trimmed to problem_cache_mb, least recently used first,
 * never one in use (a shared flock on <hash>.lock while it is used).
 *
 * Who sees what: a problem is its owner's key's (api_key_id; 0 = the
 * operator's: problems_dir, or a server without keys) and private unless
 * public; admin keys (and key 0) see and change all. Another key gets "not
 * found" for a private one, never "forbidden", so ids of private problems do
 * not leak, except that an id is taken for everyone (a POST of a taken id is
 * refused as taken).
 */
#pragma once
#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct db;
struct package;

#define PROBLEMSTORE_CHUNK (4 << 20)

/* Who asks: key_id 0 with admin true is the operator (auth off, problems_dir). */
struct problemstore_actor {
	int64_t key_id;
	bool admin;
};

enum problemstore_result {
	PS_DONE,      /* stored / changed */
	PS_SAME,      /* put: a version with this content is current or being verified */
	PS_TAKEN,     /* put (POST): the id exists */
	PS_NOT_FOUND, /* no such problem this actor may see */
	PS_FORBIDDEN, /* the actor sees it but may not change it (another key's public one) */
};

struct problemstore_put {
	const char *id;
	struct problemstore_actor who;
	bool replace;		/* PUT: the problem must exist; else (POST) it must not */
	const char *visibility; /* "private", "public", or NULL: unchanged (a new one: private) */
	bool keep;		/* keep it even when verification refuses it */
	bool verify;		/* queue a verification job; false: ready at once (problems_dir) */
	/* problems_dir's load: creates the problem (public) or adds a version to
	 * the operator's own (never a key's), and never revives a retired one */
	bool import;
	const struct package *pk;
	const cJSON *info; /* what GET /v1/problems/{id} shows of this version */
};

/* Stores in->pk as a new version of in->id (created when new). Returns the
 * result (PS_DONE with *version and, when verify, *job: the verification's
 * submission id; PS_SAME with the existing *version and, while it is being
 * verified, its *job, else 0), or -1 with err. */
int problemstore_put(struct db *db, const struct problemstore_put *in, int *version, int64_t *job,
		     char *err, size_t errlen);

/* What problemstore_put would decide of in's access (in->pk unused), without
 * storing anything: an upload is refused before its zip is read. Returns
 * PS_DONE when the put may go on, else its result, or -1 with err. */
int problemstore_may_put(struct db *db, const struct problemstore_put *in, char *err,
			 size_t errlen);

/* The version a submission of problem id gets now (its current version, when
 * who may see it and it is not retired). Returns 1 with *version and
 * *unsupported (why it cannot be graded, malloc'd, or NULL), 0 when there is
 * no such problem for who (or no version is ready yet), -1 with err. */
int problemstore_resolve(struct db *db, const char *id, const struct problemstore_actor *who,
			 int *version, char **unsupported, char *err, size_t errlen);

/* The problems who may see (retired ones left out), as the JSON array of GET
 * /v1/problems (caller owns it). Returns 0 or -1 with err. */
int problemstore_list(struct db *db, const struct problemstore_actor *who, cJSON **out, char *err,
		      size_t errlen);

/* Problem id as GET /v1/problems/{id} shows it to who: version 0 the current
 * one (or, before one is ready, the newest), else that version; with its
 * verification report and every version's state. Returns 1 with *out
 * (caller owns it), 0 when not found for who, -1 with err. */
int problemstore_get(struct db *db, const char *id, int version,
		     const struct problemstore_actor *who, cJSON **out, char *err, size_t errlen);

/* Sets the visibility ("private" or "public") of id. Returns PS_DONE,
 * PS_NOT_FOUND, PS_FORBIDDEN, or -1 with err. */
int problemstore_set_visibility(struct db *db, const char *id, const struct problemstore_actor *who,
				const char *visibility, char *err, size_t errlen);

/* Retires id: no new submissions; old ones keep their results and versions.
 * Returns PS_DONE, PS_NOT_FOUND, PS_FORBIDDEN, or -1 with err. */
int problemstore_retire(struct db *db, const char *id, const struct problemstore_actor *who,
			char *err, size_t errlen);

/* ---- the worker's copies ---- */

/* A checked-out version in use (keeps it from being trimmed). */
struct problemstore_copy {
	char *dir;	    /* the package's folder */
	long time_limit_ms; /* the limit verification inferred, 0 when none */
	int lock_fd;	    /* the shared lock on its .lock file; -1 when none */
	char hash[65];
};

/* Makes sure version of problem id is in cache_root (fetching it from the
 * database when missing) and holds it in use until problemstore_copy_release.
 * cache_mb > 0 trims the other copies to that size afterwards. Returns 1
 * with *c, 0 when there is no such version, -1 with err. */
int problemstore_checkout(struct db *db, const char *cache_root, long cache_mb, const char *id,
			  int version, struct problemstore_copy *c, char *err, size_t errlen);
void problemstore_copy_release(struct problemstore_copy *c);
