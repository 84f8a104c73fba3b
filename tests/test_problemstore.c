/* test_problemstore: problem packages in a real, private PostgreSQL cluster
 * (judge/service/problemstore.c, migrations/0011_problems.sql): versions,
 * deduplicated blobs, who sees and changes what, the verification trigger, and
 * a worker's copies (fetched file by file, checked, trimmed). Each test works
 * in its own schema, as test_queue does. */
#include <criterion/criterion.h>
#include <criterion/hooks.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/strbuf.h"
#include "judge/grading/package.h"
#include "judge/service/auth.h"
#include "judge/service/problemstore.h"
#include "judge/service/queue.h"
#include "judge/store/db.h"
#include "judge/store/migrate.h"
#include "judge/store/pgembed.h"

static struct pgembed *cluster;
static char cluster_dir[256];

ReportHook(PRE_ALL)(struct criterion_test_set *set)
{
	(void)set;
	char err[512], pg[300];
	snprintf(cluster_dir, sizeof cluster_dir, "/tmp/judge-test-problemstore.XXXXXX");
	if (!mkdtemp(cluster_dir))
		exit(1);
	chmod(cluster_dir, 0755); /* the cluster runs as the unprivileged user `judge` */
	snprintf(pg, sizeof pg, "%s/pg", cluster_dir);
	srand((unsigned)(time(NULL) ^ getpid()));
	int port = 20000 + rand() % 20000;
	if (pgembed_start(pg, port, &cluster, err, sizeof err) < 0) {
		fprintf(stderr, "test_problemstore: cannot start PostgreSQL: %s\n", err);
		exit(1);
	}
	struct strbuf url = STRBUF_INIT;
	pgembed_url(pg, port, &url);
	setenv("JUDGE_TEST_PG_URL", url.buf, 1);
	strbuf_release(&url);
}

ReportHook(POST_ALL)(struct criterion_global_stats *stats)
{
	(void)stats;
	pgembed_stop(cluster);
	package_rmtree(cluster_dir);
}

static struct db *fresh_db(const char *schema)
{
	const char *base = getenv("JUDGE_TEST_PG_URL");
	char err[512], sql[256], url[1024];
	struct db *db;
	cr_assert_eq(db_open(&db, base, 10000, err, sizeof err), 0, "%s", err);
	snprintf(sql, sizeof sql, "DROP SCHEMA IF EXISTS %s CASCADE", schema);
	cr_assert_eq(db_exec(db, sql, 0, NULL), 0, "%s", db_error(db));
	snprintf(sql, sizeof sql, "CREATE SCHEMA %s", schema);
	cr_assert_eq(db_exec(db, sql, 0, NULL), 0, "%s", db_error(db));
	db_close(db);
	snprintf(url, sizeof url, "%s options='-c search_path=%s'", base, schema);
	cr_assert_eq(db_open(&db, url, 10000, err, sizeof err), 0, "%s", err);
	int applied = -1;
	cr_assert_eq(migrate_run(db, &applied, err, sizeof err), 0, "%s", err);
	return db;
}

static long long one(struct db *db, const char *sql)
{
	PGresult *r = db_query(db, sql, 0, NULL);
	cr_assert(r, "%s: %s", sql, db_error(db));
	long long v = PQntuples(r) ? db_value_ll(r, 0, 0) : -1;
	PQclear(r);
	return v;
}

static char tmp[256];

/* A package folder tmp/name whose answer file holds answer; big > 0 adds a
 * data file of that many bytes (several chunks when large). */
static void make_dir(const char *name, const char *answer, long big)
{
	char cmd[1024];
	snprintf(
	    cmd, sizeof cmd,
	    "set -e; d='%s/%s'; mkdir -p \"$d/data/sample\" \"$d/data/secret\"; "
	    "printf 'name: %s\\n' >\"$d/problem.yaml\"; printf '1\\n' >\"$d/data/sample/1.in\"; "
	    "printf '%s' >\"$d/data/sample/1.ans\"; "
	    "if [ %ld -gt 0 ]; then head -c %ld /dev/urandom >\"$d/data/secret/big.in\"; "
	    "printf 'x' >\"$d/data/secret/big.ans\"; fi",
	    tmp, name, name, answer, big, big);
	cr_assert_eq(system(cmd), 0);
}

static void load(struct package *pk, const char *name)
{
	char dir[400], err[512];
	snprintf(dir, sizeof dir, "%s/%s", tmp, name);
	struct package_caps caps = {.max_files = 100, .max_bytes = 64 << 20};
	cr_assert_eq(package_from_dir(pk, dir, &caps, err, sizeof err), 0, "%s", err);
}

static int put(struct db *db, const char *id, struct problemstore_actor who, bool replace,
	       const struct package *pk, bool keep, int *version, int64_t *job)
{
	char err[512];
	cJSON *info = cJSON_CreateObject();
	cJSON_AddStringToObject(info, "name", id);
	struct problemstore_put in = {.id = id,
				      .who = who,
				      .replace = replace,
				      .keep = keep,
				      .verify = true,
				      .pk = pk,
				      .info = info};
	int rc = problemstore_put(db, &in, version, job, err, sizeof err);
	cr_assert_geq(rc, 0, "%s", err);
	cJSON_Delete(info);
	return rc;
}

/* Ends verification job as a worker would, with the report's ok and gradable. */
static void verified(struct db *db, int64_t job, bool ok, bool gradable)
{
	char err[512];
	struct queue_sub s;
	queue_sub_init(&s);
	cr_assert_eq(queue_claim(db, "test:1/0", 30000, 0, &s, err, sizeof err), 1, "%s", err);
	cr_assert_eq(s.id, job);
	cr_assert(cJSON_IsObject(cJSON_GetObjectItem(s.request, "verify")));
	cJSON *rep = cJSON_CreateObject();
	cJSON_AddStringToObject(rep, "status", "completed");
	cJSON_AddBoolToObject(rep, "ok", ok);
	cJSON_AddBoolToObject(rep, "gradable", gradable);
	cJSON_AddNumberToObject(rep, "time_limit_ms", 2000);
	cJSON_AddBoolToObject(rep, "time_limit_inferred", true);
	cr_assert_eq(
	    queue_finish(db, s.id, "test:1/0", s.attempts, SUB_COMPLETED, rep, err, sizeof err), 0,
	    "%s", err);
	cJSON_Delete(rep);
	queue_sub_release(&s);
}

static int resolve(struct db *db, const char *id, struct problemstore_actor who)
{
	char err[512], *unsupported = NULL;
	int version = 0;
	int rc = problemstore_resolve(db, id, &who, &version, &unsupported, err, sizeof err);
	cr_assert_geq(rc, 0, "%s", err);
	free(unsupported);
	return rc ? version : 0;
}

static void setup(void)
{
	snprintf(tmp, sizeof tmp, "/tmp/judge-test-pstore.XXXXXX");
	cr_assert(mkdtemp(tmp));
}

static void teardown(void)
{
	package_rmtree(tmp);
}

static int64_t new_key(struct db *db, const char *name, bool admin)
{
	char key[AUTH_KEY_LEN + 1], err[256];
	int64_t id = 0;
	cr_assert_eq(auth_key_create_as(db, name, admin, key, &id, err, sizeof err), 0, "%s", err);
	return id;
}

Test(problemstore, versions_access_and_the_verification_trigger, .init = setup, .fini = teardown)
{
	struct db *db = fresh_db("t_ps_versions");
	struct problemstore_actor k1 = {new_key(db, "one", false), false};
	struct problemstore_actor k2 = {new_key(db, "two", false), false};
	struct problemstore_actor adm = {new_key(db, "admin", true), true};
	char err[512];
	struct package a, b;
	make_dir("a", "1\n", 0);
	make_dir("b", "2\n", 0);
	load(&a, "a");
	load(&b, "b");
	int v = 0;
	int64_t job = 0, job2 = 0;
	cr_assert_eq(put(db, "echo", k1, false, &a, false, &v, &job), PS_DONE);
	cr_assert_eq(v, 1);
	cr_assert_gt(job, 0);
	long long blobs = one(db, "SELECT count(*) FROM problem_blobs");
	cr_assert_eq(blobs, 2, "problem.yaml, and 1.in and 1.ans (the same bytes: one blob)");
	/* taken for a POST, even for its owner; the same content is no new version */
	cr_assert_eq(put(db, "echo", k1, false, &a, false, &v, &job2), PS_TAKEN);
	cr_assert_eq(put(db, "echo", k1, true, &a, false, &v, &job2), PS_SAME);
	cr_assert_eq(v, 1);
	cr_assert_eq(job2, job, "the same verification, still running");
	/* another key: private is not found; a POST of the id is refused */
	cr_assert_eq(put(db, "echo", k2, true, &b, false, &v, &job2), PS_NOT_FOUND);
	cr_assert_eq(put(db, "echo", k2, false, &b, false, &v, &job2), PS_TAKEN);
	/* not current before its verification ends */
	cr_assert_eq(resolve(db, "echo", k1), 0);
	verified(db, job, true, true);
	cr_assert_eq(one(db, "SELECT current_version FROM problems WHERE id = 'echo'"), 1);
	cr_assert_eq(one(db, "SELECT time_limit_ms FROM problem_versions WHERE version = 1"), 2000);
	cr_assert_eq(resolve(db, "echo", k1), 1);
	cr_assert_eq(resolve(db, "echo", k2), 0, "private to k1");
	cr_assert_eq(resolve(db, "echo", adm), 1, "admin sees all");
	/* published: k2 solves it but may not change it */
	cr_assert_eq(problemstore_set_visibility(db, "echo", &k2, "public", err, sizeof err),
		     PS_NOT_FOUND);
	cr_assert_eq(problemstore_set_visibility(db, "echo", &k1, "public", err, sizeof err),
		     PS_DONE);
	cr_assert_eq(resolve(db, "echo", k2), 1);
	cr_assert_eq(put(db, "echo", k2, true, &b, false, &v, &job2), PS_FORBIDDEN);
	/* version 2: its new files only (problem.yaml, 1.ans; 1.in is stored);
	 * refused, so version 1 stays current */
	cr_assert_eq(put(db, "echo", k1, true, &b, false, &v, &job2), PS_DONE);
	cr_assert_eq(v, 2);
	cr_assert_eq(one(db, "SELECT count(*) FROM problem_blobs"), blobs + 2);
	verified(db, job2, false, true);
	cr_assert_eq(one(db, "SELECT count(*) FROM problem_versions WHERE status = 'refused'"), 1);
	cr_assert_eq(resolve(db, "echo", k1), 1);
	/* kept anyway: ready and current; a package that cannot be graded is not */
	int64_t job3 = 0, job4 = 0;
	make_dir("c", "3\n", 0);
	struct package c;
	load(&c, "c");
	cr_assert_eq(put(db, "echo", k1, true, &c, true, &v, &job3), PS_DONE);
	cr_assert_eq(v, 3);
	verified(db, job3, false, true);
	cr_assert_eq(resolve(db, "echo", k1), 3);
	cr_assert_eq(put(db, "echo", k1, true, &b, true, &v, &job4), PS_DONE);
	cr_assert_eq(v, 4, "b again: version 2 was refused, so it is verified again");
	verified(db, job4, false, false);
	cr_assert_eq(one(db, "SELECT count(*) FROM problem_versions WHERE status = 'failed'"), 1);
	cr_assert_eq(resolve(db, "echo", k1), 3);
	/* listed with versions; k2 sees it (public), not as its own */
	cJSON *list = NULL;
	cr_assert_eq(problemstore_list(db, &k2, &list, err, sizeof err), 0, "%s", err);
	cr_assert_eq(cJSON_GetArraySize(list), 1);
	cJSON *e = cJSON_GetArrayItem(list, 0);
	cr_assert(cJSON_IsFalse(cJSON_GetObjectItem(e, "mine")));
	cr_assert_eq(cJSON_GetObjectItem(e, "version")->valueint, 3);
	cr_assert_eq(cJSON_GetArraySize(cJSON_GetObjectItem(e, "versions")), 4);
	cJSON_Delete(list);
	/* one version with its report */
	cJSON *got = NULL;
	cr_assert_eq(problemstore_get(db, "echo", 2, &k1, &got, err, sizeof err), 1, "%s", err);
	cr_assert_str_eq(cJSON_GetObjectItem(got, "status")->valuestring, "refused");
	cr_assert(cJSON_IsFalse(cJSON_GetObjectItem(
	    cJSON_GetObjectItem(cJSON_GetObjectItem(got, "verification"), "report"), "ok")));
	cJSON_Delete(got);
	/* retired: gone for new submissions and for others; its owner still reads it */
	cr_assert_eq(problemstore_retire(db, "echo", &k2, err, sizeof err), PS_FORBIDDEN);
	cr_assert_eq(problemstore_retire(db, "echo", &k1, err, sizeof err), PS_DONE);
	cr_assert_eq(resolve(db, "echo", k1), 0);
	cr_assert_eq(problemstore_get(db, "echo", 0, &k2, &got, err, sizeof err), 0);
	cr_assert_eq(problemstore_get(db, "echo", 0, &k1, &got, err, sizeof err), 1);
	cr_assert(cJSON_IsTrue(cJSON_GetObjectItem(got, "retired")));
	cJSON_Delete(got);
	cr_assert_eq(put(db, "echo", k2, false, &a, false, &v, &job2), PS_TAKEN, "still taken");
	package_release(&a);
	package_release(&b);
	package_release(&c);
	db_close(db);
}

/* Compares two files' bytes. */
static bool same_file(const char *x, const char *y)
{
	char cmd[1400];
	snprintf(cmd, sizeof cmd, "cmp -s '%s' '%s'", x, y);
	return system(cmd) == 0;
}

static void import(struct db *db, const char *id, const struct package *pk)
{
	char err[512];
	int v = 0;
	int64_t job = 0;
	cJSON *info = cJSON_CreateObject();
	struct problemstore_put in = {
	    .id = id, .who = {0, true}, .import = true, .pk = pk, .info = info};
	cr_assert_eq(problemstore_put(db, &in, &v, &job, err, sizeof err), PS_DONE, "%s", err);
	cr_assert_eq(job, 0, "problems_dir's packages are not verified");
	cJSON_Delete(info);
}

Test(problemstore, checkout_fetches_checks_and_trims, .init = setup, .fini = teardown)
{
	struct db *db = fresh_db("t_ps_checkout");
	char err[512], root[300], path[600], src[600];
	snprintf(root, sizeof root, "%s/cache", tmp);
	/* 5 MiB: two chunks */
	make_dir("p1", "1\n", 5L << 20);
	make_dir("p2", "2\n", 5L << 20);
	struct package p1, p2;
	load(&p1, "p1");
	load(&p2, "p2");
	import(db, "one", &p1);
	import(db, "two", &p2);
	cr_assert_eq(one(db, "SELECT count(*) FROM problem_chunks WHERE seq = 1"), 2);
	struct problemstore_copy c1, c2, again;
	cr_assert_eq(problemstore_checkout(db, root, 0, "one", 1, &c1, err, sizeof err), 1, "%s",
		     err);
	snprintf(path, sizeof path, "%s/data/secret/big.in", c1.dir);
	snprintf(src, sizeof src, "%s/p1/data/secret/big.in", tmp);
	cr_assert(same_file(path, src), "the copy's bytes differ");
	cr_assert_str_eq(c1.hash, p1.hash);
	/* a second checkout uses the copy: same folder, not fetched again */
	struct stat st1, st2;
	cr_assert_eq(stat(path, &st1), 0);
	cr_assert_eq(problemstore_checkout(db, root, 0, "one", 1, &again, err, sizeof err), 1);
	cr_assert_eq(stat(path, &st2), 0);
	cr_assert_eq(st1.st_ino, st2.st_ino);
	problemstore_copy_release(&again);
	cr_assert_eq(problemstore_checkout(db, root, 0, "one", 7, &again, err, sizeof err), 0,
		     "no such version");
	/* 8 MiB of room: fetching two (10 MiB) removes the older one, unless in use */
	cr_assert_eq(problemstore_checkout(db, root, 8, "two", 1, &c2, err, sizeof err), 1, "%s",
		     err);
	cr_assert_eq(access(c1.dir, F_OK), 0, "in use: kept");
	problemstore_copy_release(&c2);
	problemstore_copy_release(&c1);
	cr_assert_eq(problemstore_checkout(db, root, 8, "two", 1, &c2, err, sizeof err), 1, "%s",
		     err);
	snprintf(path, sizeof path, "%s/%s", root, p1.hash);
	cr_assert_neq(access(path, F_OK), 0, "least recently used: removed");
	problemstore_copy_release(&c2);
	/* a damaged chunk is caught, and leaves no copy behind */
	cr_assert_eq(db_exec(db,
			     "UPDATE problem_chunks SET data = 'x'::bytea WHERE seq = 1 AND hash = "
			     "(SELECT hash FROM problem_blobs WHERE size = 5242880 LIMIT 1)",
			     0, NULL),
		     0, "%s", db_error(db));
	char root2[300];
	snprintf(root2, sizeof root2, "%s/cache2", tmp);
	int r1 = problemstore_checkout(db, root2, 0, "one", 1, &c1, err, sizeof err);
	int r2 = problemstore_checkout(db, root2, 0, "two", 1, &c2, err, sizeof err);
	cr_assert(r1 == -1 || r2 == -1, "a damaged copy was accepted");
	cr_assert(strstr(err, "does not match its hash") || r1 == -1, "%s", err);
	char cmd[1200];
	snprintf(cmd, sizeof cmd, "test -z \"$(ls -d '%s'/*.tmp.* 2>/dev/null)\"", root2);
	cr_assert_eq(system(cmd), 0, "a partial copy was left");
	problemstore_copy_release(&c1);
	problemstore_copy_release(&c2);
	package_release(&p1);
	package_release(&p2);
	db_close(db);
}
