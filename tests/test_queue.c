/* test_queue: migrations and the PostgreSQL queue against a real, private PostgreSQL cluster.
 *
 * The runner starts one cluster (pgembed) in a temp dir on a random port before
 * all tests; each test works in its own schema (search_path), so tests running
 * in parallel do not see each other's rows. The reconnect test restarts a
 * cluster of its own.
 */
#include <criterion/criterion.h>
#include <criterion/hooks.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/clock.h"
#include "judge/store/db.h"
#include "judge/store/migrate.h"
#include "judge/store/pgembed.h"
#include "judge/service/queue.h"
#include "judge/service/auth.h"
#include "judge/service/waiter.h"
#include "common/strbuf.h"

/* judge.ini's default interactive_lead_ms: bulk work's aging in the claim */
#define LEAD_MS 10000

static struct pgembed *cluster;
static char cluster_dir[256];

static int random_port(void)
{
	srand((unsigned)(time(NULL) ^ getpid()));
	return 20000 + rand() % 20000;
}

static void make_tmp(char *dir, size_t n)
{
	snprintf(dir, n, "/tmp/judge-test-queue.XXXXXX");
	cr_assert(mkdtemp(dir));
	/* the cluster runs as the unprivileged user `judge`, who must reach it */
	chmod(dir, 0755);
}

static void rm_rf(const char *dir)
{
	char cmd[512];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "cannot remove %s\n", dir);
}

ReportHook(PRE_ALL)(struct criterion_test_set *set)
{
	(void)set;
	char err[512], pg[300];
	make_tmp(cluster_dir, sizeof cluster_dir);
	snprintf(pg, sizeof pg, "%s/pg", cluster_dir);
	int port = random_port();
	if (pgembed_start(pg, port, &cluster, err, sizeof err) < 0) {
		fprintf(stderr, "test_queue: cannot start PostgreSQL: %s\n", err);
		exit(1);
	}
	struct strbuf url = STRBUF_INIT;
	pgembed_url(pg, port, &url);
	setenv("JUDGE_TEST_PG_URL", url.buf, 1);
	setenv("JUDGE_TEST_PG_DIR", cluster_dir, 1);
	strbuf_release(&url);
}

ReportHook(POST_ALL)(struct criterion_global_stats *stats)
{
	(void)stats;
	pgembed_stop(cluster);
	rm_rf(cluster_dir);
}

/* A connection whose search_path is a fresh, migrated schema of its own. */
static char schema_url[1024];

static struct db *fresh_db(const char *schema)
{
	const char *base = getenv("JUDGE_TEST_PG_URL");
	cr_assert(base, "no test cluster");
	char err[512];
	struct db *db;
	cr_assert_eq(db_open(&db, base, 10000, err, sizeof err), 0, "%s", err);
	char sql[256];
	snprintf(sql, sizeof sql, "DROP SCHEMA IF EXISTS %s CASCADE", schema);
	cr_assert_eq(db_exec(db, sql, 0, NULL), 0, "%s", db_error(db));
	snprintf(sql, sizeof sql, "CREATE SCHEMA %s", schema);
	cr_assert_eq(db_exec(db, sql, 0, NULL), 0, "%s", db_error(db));
	db_close(db);
	snprintf(schema_url, sizeof schema_url, "%s options='-c search_path=%s'", base, schema);
	cr_assert_eq(db_open(&db, schema_url, 10000, err, sizeof err), 0, "%s", err);
	int applied = -1;
	cr_assert_eq(migrate_run(db, &applied, err, sizeof err), 0, "%s", err);
	cr_assert_gt(applied, 0);
	return db;
}

static cJSON *req(const char *source)
{
	cJSON *r = cJSON_CreateObject();
	cJSON_AddStringToObject(r, "language", "python");
	cJSON_AddStringToObject(r, "source", source);
	return r;
}

static int64_t enqueue(struct db *db, const char *src, int prio, const char *key, int64_t api_key)
{
	char err[512];
	cJSON *r = req(src);
	struct queue_new in = {
	    .request = r, .priority = prio, .idempotency_key = key, .api_key_id = api_key};
	int64_t id = 0;
	bool created = false;
	cr_assert_eq(queue_enqueue(db, &in, &id, &created, err, sizeof err), 0, "%s", err);
	cJSON_Delete(r);
	cr_assert_gt(id, 0);
	return id;
}

static cJSON *verdict(enum sub_status status)
{
	cJSON *r = cJSON_CreateObject();
	cJSON_AddStringToObject(r, "status", status_name(status));
	return r;
}

Test(queue, migrate_twice_and_refuse_newer)
{
	struct db *db = fresh_db("t_migrate");
	char err[512];
	int applied = -1;
	cr_assert_eq(migrate_run(db, &applied, err, sizeof err), 0, "%s", err);
	cr_assert_eq(applied, 0, "second run applies nothing");
	cr_assert_eq(migrate_check(db, err, sizeof err), 0, "%s", err);
	PGresult *r = db_query(db, "SELECT max(version) FROM schema_migrations", 0, NULL);
	cr_assert(r);
	cr_assert_eq(db_value_ll(r, 0, 0), migrate_latest_version());
	PQclear(r);
	cr_assert_eq(db_exec(db, "INSERT INTO schema_migrations (version, name) VALUES (9999, 'x')",
			     0, NULL),
		     0);
	cr_assert_eq(migrate_run(db, NULL, err, sizeof err), -1);
	cr_assert(strstr(err, "newer"), "%s", err);
	cr_assert_eq(migrate_check(db, err, sizeof err), -1);
	db_close(db);
}

Test(queue, migrate_from_two_processes_at_once)
{
	struct db *db = fresh_db("t_migrate2");
	/* start over on an empty schema, then race two processes on it */
	cr_assert_eq(db_exec(db, "DROP SCHEMA t_migrate2 CASCADE", 0, NULL), 0);
	cr_assert_eq(db_exec(db, "CREATE SCHEMA t_migrate2", 0, NULL), 0);
	db_close(db);
	pid_t kids[2];
	for (int i = 0; i < 2; i++) {
		kids[i] = fork();
		cr_assert_geq(kids[i], 0);
		if (kids[i] == 0) {
			struct db *d;
			char err[512];
			if (db_open(&d, schema_url, 10000, err, sizeof err) < 0)
				_exit(2);
			int rc = migrate_run(d, NULL, err, sizeof err);
			if (rc < 0)
				fprintf(stderr, "child: %s\n", err);
			db_close(d);
			_exit(rc < 0 ? 1 : 0);
		}
	}
	for (int i = 0; i < 2; i++) {
		int st;
		cr_assert_eq(waitpid(kids[i], &st, 0), kids[i]);
		cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "migrate in child %d failed", i);
	}
	char err[512];
	cr_assert_eq(db_open(&db, schema_url, 10000, err, sizeof err), 0);
	/* numbers may have gaps (a branch holds some of them): count the files */
	long long nfiles = 0;
	for (const struct migration_file *m = migration_files; m->name; m++)
		nfiles++;
	PGresult *r = db_query(db, "SELECT count(*), max(version) FROM schema_migrations", 0, NULL);
	cr_assert(r);
	cr_assert_eq(db_value_ll(r, 0, 0), nfiles);
	cr_assert_eq(db_value_ll(r, 0, 1), migrate_latest_version());
	PQclear(r);
	cr_assert_eq(migrate_check(db, err, sizeof err), 0, "%s", err);
	db_close(db);
}

Test(queue, status_check_constraint_matches_enum)
{
	struct db *db = fresh_db("t_states");
	PGresult *r = db_query(db,
			       "SELECT pg_get_constraintdef(oid) FROM pg_constraint "
			       "WHERE conname = 'submissions_status_check' "
			       "AND connamespace = 't_states'::regnamespace",
			       0, NULL);
	cr_assert(r && PQntuples(r) == 1, "%s", db_error(db));
	const char *def = PQgetvalue(r, 0, 0);
	int n = 0;
	for (const char *p = strchr(def, '\''); p; p = strchr(p, '\'')) {
		const char *e = strchr(p + 1, '\'');
		cr_assert(e);
		cr_assert_lt(n, SUB_STATUS_COUNT, "more states in SQL than in C: %s", def);
		const char *name = status_name((enum sub_status)n);
		cr_assert(strlen(name) == (size_t)(e - p - 1) && !strncmp(name, p + 1, e - p - 1),
			  "state %d: C has %s, SQL has %.*s", n, name, (int)(e - p - 1), p + 1);
		n++;
		p = e + 1;
	}
	cr_assert_eq(n, SUB_STATUS_COUNT, "SQL lists %d states, C %d", n, SUB_STATUS_COUNT);
	PQclear(r);
	db_close(db);
}

/* Tokens (migration 0002): a UUID per submission, found only by its key;
 * front is stored beside the request and read back. */
Test(queue, tokens_and_front)
{
	struct db *db = fresh_db("t_tokens");
	char err[512];
	cJSON *r = req("tok"), *front = cJSON_Parse("{\"api\":\"judge0\",\"language_id\":71}");
	struct queue_new in = {
	    .request = r, .priority = QUEUE_PRIO_BULK, .api_key_id = 0, .front = front};
	int64_t id = 0;
	cr_assert_eq(queue_enqueue(db, &in, &id, NULL, err, sizeof err), 0, "%s", err);
	struct queue_sub s, t;
	queue_sub_init(&s);
	queue_sub_init(&t);
	cr_assert_eq(queue_get(db, id, 0, &s, err, sizeof err), 1, "%s", err);
	cr_assert(queue_token_valid(s.token), "token '%s'", s.token);
	cr_assert(cJSON_Compare(s.front, front, true));
	cr_assert_eq(queue_get_token(db, s.token, 0, &t, err, sizeof err), 1, "%s", err);
	cr_assert_eq(t.id, id);
	/* another key, an unknown token, a malformed one: not found */
	cr_assert_eq(queue_get_token(db, s.token, 7, &t, err, sizeof err), 0);
	cr_assert_eq(
	    queue_get_token(db, "00000000-0000-4000-8000-000000000000", 0, &t, err, sizeof err), 0);
	cr_assert_eq(queue_get_token(db, "1; DROP TABLE submissions", 0, &t, err, sizeof err), 0);
	cr_assert_not(queue_token_valid("0000000-00000-4000-8000-000000000000"));
	int64_t id2 = enqueue(db, "tok2", QUEUE_PRIO_BULK, NULL, 0);
	struct queue_sub u;
	queue_sub_init(&u);
	cr_assert_eq(queue_get(db, id2, 0, &u, err, sizeof err), 1, "%s", err);
	cr_assert_str_neq(u.token, s.token);
	cr_assert_null(u.front);
	queue_sub_release(&s);
	queue_sub_release(&t);
	queue_sub_release(&u);
	cJSON_Delete(r);
	cJSON_Delete(front);
	db_close(db);
}

Test(queue, enqueue_claim_finish)
{
	struct db *db = fresh_db("t_basic");
	char err[512];
	int64_t id = enqueue(db, "print(1)", QUEUE_PRIO_BULK, NULL, 0);
	struct queue_sub s;
	queue_sub_init(&s);
	cr_assert_eq(queue_get(db, id, 0, &s, err, sizeof err), 1);
	cr_assert_eq(s.status, SUB_QUEUED);
	cr_assert_str_eq(cJSON_GetObjectItem(s.request, "source")->valuestring, "print(1)");
	cr_assert_eq(queue_claim(db, "w1", 30000, LEAD_MS, &s, err, sizeof err), 1, "%s", err);
	cr_assert_eq(s.id, id);
	cr_assert_eq(s.status, SUB_RUNNING);
	cr_assert_eq(s.attempts, 1);
	cr_assert_str_eq(s.worker, "w1");
	cr_assert_gt(s.started_ms, 0);
	cr_assert_eq(queue_claim(db, "w2", 30000, LEAD_MS, &s, err, sizeof err), 0,
		     "queue is empty");
	cr_assert_eq(queue_extend(db, id, "w1", 1, 30000, err, sizeof err), 0);
	cr_assert_eq(queue_extend(db, id, "w2", 1, 30000, err, sizeof err), 1, "not w2's claim");
	cJSON *v = verdict(SUB_ACCEPTED);
	cr_assert_eq(queue_finish(db, id, "w2", 1, SUB_ACCEPTED, v, err, sizeof err), 1,
		     "not w2's claim");
	cr_assert_eq(queue_finish(db, id, "w1", 1, SUB_ACCEPTED, v, err, sizeof err), 0, "%s", err);
	cr_assert_eq(queue_finish(db, id, "w1", 1, SUB_ACCEPTED, v, err, sizeof err), 1,
		     "ends once");
	cJSON_Delete(v);
	cr_assert_eq(queue_get(db, id, 0, &s, err, sizeof err), 1);
	cr_assert_eq(s.status, SUB_ACCEPTED);
	cr_assert_str_eq(cJSON_GetObjectItem(s.result, "status")->valuestring, "accepted");
	cr_assert_gt(s.finished_ms, 0);
	cr_assert_eq(queue_get(db, id + 1000, 0, &s, err, sizeof err), 0);
	/* a result without a final status is stored as internal_error */
	id = enqueue(db, "x", QUEUE_PRIO_BULK, NULL, 0);
	cr_assert_eq(queue_claim(db, "w1", 30000, LEAD_MS, &s, err, sizeof err), 1);
	v = verdict(SUB_RUNNING);
	cr_assert_eq(queue_finish(db, id, "w1", 1, SUB_RUNNING, v, err, sizeof err), 0, "%s", err);
	cJSON_Delete(v);
	cr_assert_eq(queue_get(db, id, 0, &s, err, sizeof err), 1);
	cr_assert_eq(s.status, SUB_INTERNAL_ERROR);
	/* the stored JSON says the same as the column */
	cr_assert_str_eq(cJSON_GetObjectItem(s.result, "status")->valuestring, "internal_error");
	cr_assert_str_eq(cJSON_GetObjectItem(s.result, "message")->valuestring,
			 "grading returned no final status");
	long counts[SUB_STATUS_COUNT];
	cr_assert_eq(queue_counts(db, counts, err, sizeof err), 0);
	cr_assert_eq(counts[SUB_ACCEPTED], 1);
	cr_assert_eq(counts[SUB_INTERNAL_ERROR], 1);
	queue_sub_release(&s);
	db_close(db);
}

/* Waits for a NOTIFY on listener whose payload is id (other tests notify too). */
static bool heard(struct db *listener, int64_t id)
{
	struct db_notify n;
	while (db_wait_notify(listener, 5000, &n) == 1)
		if (strtoll(n.payload, NULL, 10) == id)
			return true;
	return false;
}

Test(queue, finish_claims_the_next)
{
	struct db *db = fresh_db("t_finclaim");
	char err[512];
	struct db *listener;
	cr_assert_eq(db_open(&listener, schema_url, 10000, err, sizeof err), 0, "%s", err);
	cr_assert_eq(db_listen(listener, QUEUE_CHANNEL_DONE), 0);
	int64_t a = enqueue(db, "a", QUEUE_PRIO_BULK, NULL, 0);
	int64_t b = enqueue(db, "b", QUEUE_PRIO_BULK, NULL, 0);
	struct queue_sub s, next;
	queue_sub_init(&s);
	queue_sub_init(&next);
	bool claimed = false;
	cr_assert_eq(queue_claim(db, "w1", 30000, LEAD_MS, &s, err, sizeof err), 1, "%s", err);
	cr_assert_eq(s.id, a);
	cJSON *v = verdict(SUB_ACCEPTED);
	cr_assert_eq(queue_finish_claim(db, a, "w2", 1, SUB_ACCEPTED, v, 30000, LEAD_MS, &next,
					&claimed, err, sizeof err),
		     1, "not w2's claim");
	cr_assert(claimed, "the next one is claimed even so");
	cr_assert_eq(next.id, b);
	cr_assert_eq(queue_release(db, b, "w2", 1, err, sizeof err), 0, "%s", err);
	cr_assert_eq(queue_finish_claim(db, a, "w1", 1, SUB_ACCEPTED, v, 30000, LEAD_MS, &next,
					&claimed, err, sizeof err),
		     0, "%s", err);
	cr_assert(heard(listener, a), "judge_done sent for the finish");
	cr_assert(claimed);
	cr_assert_eq(next.id, b);
	cr_assert_eq(next.status, SUB_RUNNING);
	cr_assert_eq(next.attempts, 1);
	cr_assert_str_eq(next.worker, "w1");
	cr_assert_str_eq(cJSON_GetObjectItem(next.request, "source")->valuestring, "b");
	cr_assert_eq(queue_get(db, a, 0, &s, err, sizeof err), 1);
	cr_assert_eq(s.status, SUB_ACCEPTED);
	cr_assert_eq(queue_finish_claim(db, b, "w1", 1, SUB_ACCEPTED, v, 30000, LEAD_MS, &next,
					&claimed, err, sizeof err),
		     0, "%s", err);
	cr_assert(!claimed, "queue is empty");
	cr_assert_eq(queue_finish_claim(db, b, "w1", 1, SUB_ACCEPTED, v, 30000, LEAD_MS, &next,
					&claimed, err, sizeof err),
		     1, "ends once");
	cr_assert(!claimed);
	cJSON_Delete(v);
	queue_sub_release(&s);
	queue_sub_release(&next);
	db_close(listener);
	db_close(db);
}

Test(queue, idempotency_key)
{
	struct db *db = fresh_db("t_idem");
	char err[512];
	cr_assert_eq(db_exec(db,
			     "INSERT INTO api_keys (name, hash) VALUES ('a', 'h1'), ('b', 'h2')", 0,
			     NULL),
		     0, "%s", db_error(db));
	int64_t a = enqueue(db, "1", QUEUE_PRIO_BULK, "k1", 1);
	int64_t b = enqueue(db, "2", QUEUE_PRIO_BULK, "k1", 1);
	int64_t c = enqueue(db, "3", QUEUE_PRIO_BULK, "k1", 2);
	int64_t d = enqueue(db, "4", QUEUE_PRIO_BULK, "k2", 1);
	int64_t e = enqueue(db, "5", QUEUE_PRIO_BULK, NULL, 1);
	int64_t f = enqueue(db, "6", QUEUE_PRIO_BULK, NULL, 1);
	cr_assert_eq(a, b, "same key, same submission");
	cr_assert_neq(a, c, "keys are per API key");
	cr_assert_neq(a, d);
	cr_assert_neq(e, f, "no key, no deduplication");
	struct queue_sub s;
	queue_sub_init(&s);
	cr_assert_eq(queue_get(db, a, 0, &s, err, sizeof err), 1);
	cr_assert_str_eq(cJSON_GetObjectItem(s.request, "source")->valuestring, "1");
	cr_assert_eq(queue_get(db, a, 2, &s, err, sizeof err), 0, "another key does not see it");
	cr_assert_eq(queue_get(db, a, 1, &s, err, sizeof err), 1);
	/* a batch: all or nothing, keys honoured inside it too */
	cJSON *r1 = req("b1"), *r2 = req("b2");
	struct queue_new in[3] = {
	    {.request = r1, .priority = QUEUE_PRIO_BULK},
	    {.request = r2, .priority = QUEUE_PRIO_BULK, .idempotency_key = "k1", .api_key_id = 1},
	    {.request = r2, .priority = QUEUE_PRIO_BULK, .idempotency_key = "bk", .api_key_id = 1}};
	int64_t ids[3];
	bool created[3];
	cr_assert_eq(queue_enqueue_batch(db, in, 3, ids, created, err, sizeof err), 0, "%s", err);
	cr_assert(created[0] && !created[1] && created[2]);
	cr_assert_eq(ids[1], a);
	cJSON_Delete(r1);
	cJSON_Delete(r2);
	queue_sub_release(&s);
	db_close(db);
}

Test(queue, interactive_before_bulk)
{
	struct db *db = fresh_db("t_prio");
	char err[512];
	int64_t a = enqueue(db, "a", QUEUE_PRIO_BULK, NULL, 0);
	int64_t b = enqueue(db, "b", QUEUE_PRIO_BULK, NULL, 0);
	int64_t c = enqueue(db, "c", QUEUE_PRIO_INTERACTIVE, NULL, 0);
	int64_t d = enqueue(db, "d", QUEUE_PRIO_INTERACTIVE, NULL, 0);
	int64_t want[] = {c, d, a, b};
	struct queue_sub s;
	queue_sub_init(&s);
	for (int i = 0; i < 4; i++) {
		cr_assert_eq(queue_claim(db, "w", 30000, LEAD_MS, &s, err, sizeof err), 1);
		cr_assert_eq(s.id, want[i], "claim %d got %" PRId64, i, s.id);
	}
	queue_sub_release(&s);
	db_close(db);
}

Test(queue, lease_expiry_reap_and_attempt_cap)
{
	struct db *db = fresh_db("t_lease");
	char err[512];
	int64_t id = enqueue(db, "slow", QUEUE_PRIO_BULK, NULL, 0);
	struct queue_sub s;
	queue_sub_init(&s);
	int requeued = -1, failed = -1;
	cr_assert_eq(queue_claim(db, "w1", 200, LEAD_MS, &s, err, sizeof err), 1);
	cr_assert_eq(queue_reap(db, 2, &requeued, &failed, err, sizeof err), 0, "%s", err);
	cr_assert_eq(requeued + failed, 0, "lease still valid");
	usleep(400 * 1000);
	cr_assert_eq(queue_reap(db, 2, &requeued, &failed, err, sizeof err), 0, "%s", err);
	cr_assert_eq(requeued, 1);
	cr_assert_eq(failed, 0);
	cr_assert_eq(queue_get(db, id, 0, &s, err, sizeof err), 1);
	cr_assert_eq(s.status, SUB_QUEUED);
	cJSON *v = verdict(SUB_ACCEPTED);
	cr_assert_eq(queue_finish(db, id, "w1", 1, SUB_ACCEPTED, v, err, sizeof err), 1,
		     "reaped claim is gone");
	cr_assert_eq(queue_extend(db, id, "w1", 1, 200, err, sizeof err), 1);
	/* same worker name claims it again: attempt 2 is a different claim */
	cr_assert_eq(queue_claim(db, "w1", 200, LEAD_MS, &s, err, sizeof err), 1);
	cr_assert_eq(s.attempts, 2);
	cr_assert_eq(queue_finish(db, id, "w1", 1, SUB_ACCEPTED, v, err, sizeof err), 1,
		     "old attempt is stale");
	usleep(400 * 1000);
	cr_assert_eq(queue_reap(db, 2, &requeued, &failed, err, sizeof err), 0, "%s", err);
	cr_assert_eq(failed, 1, "second expiry hits the cap of 2");
	cr_assert_eq(queue_get(db, id, 0, &s, err, sizeof err), 1);
	cr_assert_eq(s.status, SUB_INTERNAL_ERROR);
	const cJSON *msg = cJSON_GetObjectItem(s.result, "message");
	cr_assert(cJSON_IsString(msg) && strstr(msg->valuestring, "gave up after 2 attempts"));
	cr_assert_eq(queue_finish(db, id, "w1", 2, SUB_ACCEPTED, v, err, sizeof err), 1,
		     "already ended");
	cJSON_Delete(v);
	/* a drained hand-back does not count as an attempt */
	id = enqueue(db, "drain", QUEUE_PRIO_BULK, NULL, 0);
	cr_assert_eq(queue_claim(db, "w3", 30000, LEAD_MS, &s, err, sizeof err), 1);
	cr_assert_eq(queue_release(db, id, "w3", 1, err, sizeof err), 0, "%s", err);
	cr_assert_eq(queue_get(db, id, 0, &s, err, sizeof err), 1);
	cr_assert_eq(s.status, SUB_QUEUED);
	cr_assert_eq(s.attempts, 0);
	queue_sub_release(&s);
	db_close(db);
}

struct finisher {
	int64_t id;
	int delay_ms;
};

static void *finish_later(void *arg)
{
	struct finisher *f = arg;
	struct db *db;
	char err[512];
	usleep((useconds_t)f->delay_ms * 1000);
	if (db_open(&db, schema_url, 10000, err, sizeof err) < 0)
		return NULL;
	struct queue_sub s;
	queue_sub_init(&s);
	if (queue_claim(db, "wf", 30000, LEAD_MS, &s, err, sizeof err) == 1) {
		cJSON *v = verdict(SUB_WRONG_ANSWER);
		queue_finish(db, s.id, "wf", s.attempts, SUB_WRONG_ANSWER, v, err, sizeof err);
		cJSON_Delete(v);
	}
	queue_sub_release(&s);
	db_close(db);
	return NULL;
}

static long elapsed_ms(struct timespec *t0)
{
	struct timespec t1;
	clock_gettime(CLOCK_MONOTONIC, &t1);
	return (t1.tv_sec - t0->tv_sec) * 1000 + (t1.tv_nsec - t0->tv_nsec) / 1000000;
}

/* A parked wait as the HTTP API makes one: resume records that it ran. */
struct parked {
	struct waiter w;
	pthread_mutex_t lock;
	int resumed, suspended;
};

static void parked_resume(struct waiter *w)
{
	struct parked *p = w->arg;
	pthread_mutex_lock(&p->lock);
	p->resumed++;
	pthread_mutex_unlock(&p->lock);
}

static void parked_suspend(struct waiter *w)
{
	((struct parked *)w->arg)->suspended++;
}

static int resumed(struct parked *p)
{
	pthread_mutex_lock(&p->lock);
	int n = p->resumed;
	pthread_mutex_unlock(&p->lock);
	return n;
}

/* Waits up to ms for p to be resumed; returns the milliseconds it took, or -1. */
static long await_resume(struct parked *p, long ms)
{
	struct timespec t0;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (!resumed(p)) {
		if (elapsed_ms(&t0) > ms)
			return -1;
		usleep(5000);
	}
	return elapsed_ms(&t0);
}

/* The hub connects in its own thread: wait until it listens. */
static void await_listening(struct waiter_hub *h, long before)
{
	struct timespec t0;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (waiter_hub_connects(h) <= before && elapsed_ms(&t0) < 10000)
		usleep(10000);
	cr_assert_gt(waiter_hub_connects(h), before, "the hub listens");
}

Test(queue, waiter_blocking_wait)
{
	struct db *db = fresh_db("t_wait");
	char err[512];
	struct waiter_hub *h;
	struct db_pool *pool;
	cr_assert_eq(waiter_hub_start(&h, schema_url, NULL, NULL, err, sizeof err), 0, "%s", err);
	cr_assert_eq(db_pool_new(&pool, schema_url, 4, 5000, err, sizeof err), 0, "%s", err);
	await_listening(h, 0);
	int64_t id = enqueue(db, "w", QUEUE_PRIO_BULK, NULL, 0);
	struct queue_sub s;
	queue_sub_init(&s);
	struct timespec t0;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	cr_assert_eq(waiter_wait(h, pool, id, 0, 200, &s, err, sizeof err), 0,
		     "times out while queued");
	cr_assert_eq(s.status, SUB_QUEUED);
	long waited = elapsed_ms(&t0);
	cr_assert_geq(waited, 190);
	cr_assert_lt(waited, 1500, "woken at the deadline (%ld ms)", waited);
	pthread_t th;
	struct finisher f = {id, 300};
	pthread_create(&th, NULL, finish_later, &f);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	cr_assert_eq(waiter_wait(h, pool, id, 0, 10000, &s, err, sizeof err), 1, "%s", err);
	waited = elapsed_ms(&t0);
	pthread_join(th, NULL);
	cr_assert_eq(s.status, SUB_WRONG_ANSWER);
	cr_assert_lt(waited, 1500, "woken by NOTIFY, not by the timeout (%ld ms)", waited);
	cr_assert_eq(waiter_wait(h, pool, id + 999, 0, 200, &s, err, sizeof err), 2,
		     "no such submission");
	cr_assert_eq(waiter_wait(h, pool, id, 7, 200, &s, err, sizeof err), 2,
		     "another key's submission is not found");
	waiter_hub_stop(h);
	db_pool_free(pool);
	queue_sub_release(&s);
	db_close(db);
}

/* The protocol of the HTTP API's parked requests: register, read, park; the
 * hub's thread resumes on the submission's judge_done, on the deadline, and
 * not for another submission. */
Test(queue, waiter_parks_and_resumes)
{
	struct db *db = fresh_db("t_park");
	char err[512];
	struct waiter_hub *h;
	cr_assert_eq(waiter_hub_start(&h, schema_url, NULL, NULL, err, sizeof err), 0, "%s", err);
	await_listening(h, 0);
	int64_t id = enqueue(db, "p", QUEUE_PRIO_BULK, NULL, 0);
	int64_t other = enqueue(db, "o", QUEUE_PRIO_BULK, NULL, 0);
	struct parked p = {
	    .w = {.id = id, .deadline_ms = clock_mono_ms() + 60000, .resume = parked_resume}};
	p.w.arg = &p;
	pthread_mutex_init(&p.lock, NULL);
	waiter_register(h, &p.w);
	cr_assert(waiter_park(h, &p.w, parked_suspend), "nothing came: it parks");
	cr_assert_eq(p.suspended, 1);
	/* finishing another submission does not resume it */
	struct queue_sub s;
	queue_sub_init(&s);
	cr_assert_eq(queue_claim(db, "wp", 30000, LEAD_MS, &s, err, sizeof err), 1, "%s", err);
	cr_assert_eq(s.id, id, "the first queued is ours");
	struct queue_sub s2;
	queue_sub_init(&s2);
	cr_assert_eq(queue_claim(db, "wp", 30000, LEAD_MS, &s2, err, sizeof err), 1, "%s", err);
	cr_assert_eq(s2.id, other);
	cJSON *v = verdict(SUB_ACCEPTED);
	cr_assert_eq(queue_finish(db, other, "wp", s2.attempts, SUB_ACCEPTED, v, err, sizeof err),
		     0, "%s", err);
	cr_assert_eq(await_resume(&p, 700), -1, "not resumed by another id");
	cr_assert_eq(queue_finish(db, id, "wp", s.attempts, SUB_ACCEPTED, v, err, sizeof err), 0,
		     "%s", err);
	long took = await_resume(&p, 5000);
	cr_assert_geq(took, 0, "resumed by its judge_done");
	cr_assert_lt(took, 1500);
	cr_assert_eq(resumed(&p), 1);
	cr_assert_not(p.w.registered, "a resumed waiter left the table");

	/* a notification while reading: park says read again and does not park */
	waiter_register(h, &p.w);
	char ids[24];
	snprintf(ids, sizeof ids, "%" PRId64, id);
	cr_assert_eq(
	    db_exec(db, "SELECT pg_notify('" QUEUE_CHANNEL_DONE "', $1)", 1, (const char *[]){ids}),
	    0);
	struct timespec t0;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (!p.w.notified && elapsed_ms(&t0) < 5000)
		usleep(5000);
	cr_assert_not(waiter_park(h, &p.w, parked_suspend), "notified: read again");
	cr_assert_eq(p.suspended, 1);
	waiter_unregister(h, &p.w);

	/* the deadline resumes a parked wait without any notification */
	pthread_mutex_lock(&p.lock);
	p.resumed = 0;
	pthread_mutex_unlock(&p.lock);
	p.w.deadline_ms = clock_mono_ms() + 300;
	waiter_register(h, &p.w);
	cr_assert(waiter_park(h, &p.w, parked_suspend));
	took = await_resume(&p, 5000);
	cr_assert_geq(took, 150, "not before its deadline (%ld ms)", took);
	cr_assert_lt(took, 1500, "at its deadline (%ld ms)", took);
	cJSON_Delete(v);
	queue_sub_release(&s);
	queue_sub_release(&s2);
	waiter_hub_stop(h);
	pthread_mutex_destroy(&p.lock);
	db_close(db);
}

/* Waits until h has heard more than n notifications in all. */
static void await_heard(struct waiter_hub *h, uint64_t n)
{
	struct timespec t0;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (waiter_mark(h).heard <= n && elapsed_ms(&t0) < 10000)
		usleep(5000);
	cr_assert_gt(waiter_mark(h).heard, n, "the hub heard it");
}

/* Claims and finishes the next queued submission, which must be id, and waits
 * until h has heard its judge_done (a parked waiter of its own is resumed). */
static void finish_heard(struct waiter_hub *h, struct db *db, int64_t id)
{
	char err[512];
	struct parked q = {
	    .w = {.id = id, .deadline_ms = clock_mono_ms() + 60000, .resume = parked_resume}};
	q.w.arg = &q;
	pthread_mutex_init(&q.lock, NULL);
	waiter_register(h, &q.w);
	cr_assert(waiter_park(h, &q.w, parked_suspend));
	struct queue_sub s;
	queue_sub_init(&s);
	cJSON *v = verdict(SUB_ACCEPTED);
	cr_assert_eq(queue_claim(db, "ws", 30000, LEAD_MS, &s, err, sizeof err), 1, "%s", err);
	cr_assert_eq(s.id, id);
	cr_assert_eq(queue_finish(db, id, "ws", s.attempts, SUB_ACCEPTED, v, err, sizeof err), 0);
	cr_assert_geq(await_resume(&q, 10000), 0, "the hub heard the finish");
	cJSON_Delete(v);
	queue_sub_release(&s);
	pthread_mutex_destroy(&q.lock);
}

/* A wait for a submission queued after a mark skips its first read only when
 * the hub is sure it heard no finish for it since. */
Test(queue, waiter_register_since)
{
	struct db *db = fresh_db("t_since");
	char err[512];
	/* ids of its own: judge_done is heard across the schemas of tests that run
	 * at the same time, which number their submissions from 1 */
	cr_assert_eq(db_exec(db, "SELECT setval('submissions_id_seq', 7000000000)", 0, NULL), 0);
	struct waiter_hub *h;
	cr_assert_eq(waiter_hub_start(&h, schema_url, NULL, NULL, err, sizeof err), 0, "%s", err);
	await_listening(h, 0);
	struct parked p = {.w = {.deadline_ms = clock_mono_ms() + 60000, .resume = parked_resume}};
	p.w.arg = &p;
	pthread_mutex_init(&p.lock, NULL);

	/* nothing finished since the mark: no read needed */
	struct waiter_mark m = waiter_mark(h);
	cr_assert(m.listening);
	p.w.id = enqueue(db, "a", QUEUE_PRIO_BULK, NULL, 0);
	cr_assert(waiter_register_since(h, &p.w, &m));
	cr_assert(p.w.registered);
	waiter_unregister(h, &p.w);
	finish_heard(h, db, p.w.id);

	/* it finished (and the hub heard it) before the wait registered: read */
	m = waiter_mark(h);
	p.w.id = enqueue(db, "b", QUEUE_PRIO_BULK, NULL, 0);
	finish_heard(h, db, p.w.id);
	cr_assert_not(waiter_register_since(h, &p.w, &m), "its finish was heard: read");
	waiter_unregister(h, &p.w);

	/* another submission's finish does not matter */
	m = waiter_mark(h);
	int64_t first = enqueue(db, "c", QUEUE_PRIO_BULK, NULL, 0);
	p.w.id = enqueue(db, "d", QUEUE_PRIO_BULK, NULL, 0);
	finish_heard(h, db, first);
	cr_assert(waiter_register_since(h, &p.w, &m));
	waiter_unregister(h, &p.w);

	/* more finishes since the mark than the hub keeps: it cannot tell, read */
	m = waiter_mark(h);
	cr_assert_eq(db_exec(db,
			     "SELECT pg_notify('" QUEUE_CHANNEL_DONE "', (g + 8000000000)::text) "
			     "FROM generate_series(1, 5000) g",
			     0, NULL),
		     0);
	await_heard(h, m.heard + 4999);
	cr_assert_not(waiter_register_since(h, &p.w, &m));
	waiter_unregister(h, &p.w);

	waiter_hub_stop(h);
	pthread_mutex_destroy(&p.lock);
	db_close(db);
}

#define CLAIMERS 4
#define JOBS	 200

struct claimer {
	int n;
	int64_t ids[JOBS];
};

static void *claim_all(void *arg)
{
	struct claimer *c = arg;
	struct db *db;
	char err[512], name[32];
	snprintf(name, sizeof name, "c%p", arg);
	if (db_open(&db, schema_url, 10000, err, sizeof err) < 0)
		return NULL;
	struct queue_sub s;
	queue_sub_init(&s);
	while (queue_claim(db, name, 30000, LEAD_MS, &s, err, sizeof err) == 1) {
		c->ids[c->n++] = s.id;
		cJSON *v = verdict(SUB_ACCEPTED);
		queue_finish(db, s.id, name, s.attempts, SUB_ACCEPTED, v, err, sizeof err);
		cJSON_Delete(v);
	}
	queue_sub_release(&s);
	db_close(db);
	return NULL;
}

Test(queue, concurrent_claims_take_each_job_once)
{
	struct db *db = fresh_db("t_skip");
	for (int i = 0; i < JOBS; i++)
		enqueue(db, "j", i % 3 ? QUEUE_PRIO_BULK : QUEUE_PRIO_INTERACTIVE, NULL, 0);
	static struct claimer c[CLAIMERS];
	pthread_t th[CLAIMERS];
	for (int i = 0; i < CLAIMERS; i++)
		pthread_create(&th[i], NULL, claim_all, &c[i]);
	for (int i = 0; i < CLAIMERS; i++)
		pthread_join(th[i], NULL);
	static char seen[JOBS + 1];
	int total = 0;
	for (int i = 0; i < CLAIMERS; i++)
		for (int j = 0; j < c[i].n; j++) {
			int64_t id = c[i].ids[j];
			cr_assert(id >= 1 && id <= JOBS);
			cr_assert_eq(seen[id], 0, "job %" PRId64 " claimed twice", id);
			seen[id] = 1;
			total++;
		}
	cr_assert_eq(total, JOBS);
	PGresult *r = db_query(db,
			       "SELECT count(*) FROM submissions WHERE status = 'accepted' "
			       "AND attempts = 1",
			       0, NULL);
	cr_assert(r);
	cr_assert_eq(db_value_ll(r, 0, 0), JOBS);
	PQclear(r);
	db_close(db);
}

Test(queue, callbacks_are_scheduled_and_recorded)
{
	struct db *db = fresh_db("t_cb");
	char err[512];
	cJSON *r = req("cb");
	struct queue_new in = {
	    .request = r, .priority = QUEUE_PRIO_BULK, .callback_url = "http://127.0.0.1:9/x"};
	int64_t id;
	cr_assert_eq(queue_enqueue(db, &in, &id, NULL, err, sizeof err), 0, "%s", err);
	cJSON_Delete(r);
	struct queue_sub s;
	queue_sub_init(&s);
	cr_assert_eq(queue_callback_next(db, 5000, &s, err, sizeof err), 0, "not finished yet");
	cr_assert_eq(queue_claim(db, "w", 30000, LEAD_MS, &s, err, sizeof err), 1);
	cJSON *v = verdict(SUB_ACCEPTED);
	cr_assert_eq(queue_finish(db, id, "w", 1, SUB_ACCEPTED, v, err, sizeof err), 0);
	cJSON_Delete(v);
	cr_assert_eq(queue_callback_next(db, 5000, &s, err, sizeof err), 1, "%s", err);
	cr_assert_eq(s.id, id);
	cr_assert_eq(s.callback_attempts, 1);
	cr_assert_str_eq(s.callback_url, "http://127.0.0.1:9/x");
	cr_assert_eq(queue_callback_next(db, 5000, &s, err, sizeof err), 0, "leased");
	cr_assert_eq(queue_callback_done(db, id, false, 0, "answered HTTP 500", err, sizeof err),
		     0);
	cr_assert_eq(queue_callback_next(db, 5000, &s, err, sizeof err), 1, "retry due now");
	cr_assert_eq(s.callback_attempts, 2);
	cr_assert_str_eq(s.callback_error, "answered HTTP 500", "why the last one failed");
	cr_assert(s.callback_pending);
	cr_assert_eq(s.callback_done_ms, 0);
	cr_assert_eq(queue_callback_done(db, id, true, 0, NULL, err, sizeof err), 0);
	cr_assert_eq(queue_callback_done(db, id, true, 0, NULL, err, sizeof err), 0);
	cr_assert_eq(queue_callback_next(db, 0, &s, err, sizeof err), 0, "delivered");
	cr_assert_eq(queue_get(db, id, 0, &s, err, sizeof err), 1, "%s", err);
	cr_assert_gt(s.callback_done_ms, 0);
	cr_assert(!s.callback_pending);
	cr_assert_null(s.callback_error, "a delivery clears the error");
	queue_sub_release(&s);
	db_close(db);
}

/* judge_done says whether the finished submission has a callback to deliver,
 * so that the API's sender is woken only then (queue.h). */
Test(queue, done_payload_says_callback)
{
	struct db *db = fresh_db("t_cbnote");
	char err[512];
	struct db *listener;
	cr_assert_eq(db_open(&listener, schema_url, 10000, err, sizeof err), 0, "%s", err);
	cr_assert_eq(db_listen(listener, QUEUE_CHANNEL_DONE), 0);
	cJSON *r = req("cb");
	struct queue_new in = {
	    .request = r, .priority = QUEUE_PRIO_BULK, .callback_url = "http://127.0.0.1:9/x"};
	int64_t with, without = enqueue(db, "plain", QUEUE_PRIO_BULK, NULL, 0);
	cr_assert_eq(queue_enqueue(db, &in, &with, NULL, err, sizeof err), 0, "%s", err);
	cJSON_Delete(r);
	cJSON *v = verdict(SUB_ACCEPTED);
	struct queue_sub s;
	queue_sub_init(&s);
	for (int i = 0; i < 2; i++) {
		cr_assert_eq(queue_claim(db, "w", 30000, LEAD_MS, &s, err, sizeof err), 1, "%s",
			     err);
		cr_assert_eq(queue_finish(db, s.id, "w", 1, SUB_ACCEPTED, v, err, sizeof err), 0);
	}
	cJSON_Delete(v);
	char want_with[64], want_without[64];
	snprintf(want_with, sizeof want_with, "%" PRId64 QUEUE_DONE_CALLBACK, with);
	snprintf(want_without, sizeof want_without, "%" PRId64, without);
	int seen = 0;
	struct db_notify n;
	while (seen != 3 && db_wait_notify(listener, 5000, &n) == 1) {
		if (!strcmp(n.payload, want_with))
			seen |= 1;
		else if (!strcmp(n.payload, want_without))
			seen |= 2;
	}
	cr_assert_eq(seen, 3, "both finishes heard with their payloads");
	queue_sub_release(&s);
	db_close(listener);
	db_close(db);
}

static char own_dir[256];
static struct pgembed *own;

static void own_cluster_fini(void)
{
	pgembed_stop(own);
	own = NULL;
	if (own_dir[0])
		rm_rf(own_dir);
}

Test(queue, reconnect_after_postgres_restart, .timeout = 120, .fini = own_cluster_fini)
{
	char pg[300], err[512];
	make_tmp(own_dir, sizeof own_dir);
	snprintf(pg, sizeof pg, "%s/pg", own_dir);
	int port = random_port();
	cr_assert_eq(pgembed_start(pg, port, &own, err, sizeof err), 0, "%s", err);
	struct strbuf url = STRBUF_INIT;
	pgembed_url(pg, port, &url);
	struct db *db, *listener;
	cr_assert_eq(db_open(&db, url.buf, 10000, err, sizeof err), 0, "%s", err);
	cr_assert_eq(migrate_run(db, NULL, err, sizeof err), 0, "%s", err);
	cr_assert_eq(db_open(&listener, url.buf, 10000, err, sizeof err), 0, "%s", err);
	cr_assert_eq(db_listen(listener, QUEUE_CHANNEL_NEW), 0);
	int64_t id = enqueue(db, "before", QUEUE_PRIO_BULK, NULL, 0);
	/* a parked wait: the restart may lose its notification, so the hub
	 * resumes every wait once it listens again */
	struct waiter_hub *h;
	cr_assert_eq(waiter_hub_start(&h, url.buf, NULL, NULL, err, sizeof err), 0, "%s", err);
	await_listening(h, 0);
	struct parked p = {
	    .w = {.id = id, .deadline_ms = clock_mono_ms() + 600000, .resume = parked_resume}};
	p.w.arg = &p;
	pthread_mutex_init(&p.lock, NULL);
	waiter_register(h, &p.w);
	cr_assert(waiter_park(h, &p.w, parked_suspend));
	cr_assert_eq(pgembed_restart(own, err, sizeof err), 0, "%s", err);
	/* resumed when the hub lost the database or when it listened again */
	cr_assert_geq(await_resume(&p, 30000), 0, "resumed after the restart");
	await_listening(h, 1); /* and it reconnects by itself */
	waiter_hub_stop(h);
	pthread_mutex_destroy(&p.lock);
	/* an idle connection notices the restart and reconnects before querying */
	int64_t id2 = enqueue(db, "after", QUEUE_PRIO_BULK, NULL, 0);
	cr_assert_gt(id2, id);
	cr_assert_geq(db_reconnects(db), 1);
	struct db_notify n;
	int rc;
	/* the listener reports the reconnect, then hears new notifications again */
	do
		rc = db_wait_notify(listener, 5000, &n);
	while (rc == 1);
	cr_assert_eq(rc, 2, "reconnect reported (got %d)", rc);
	int64_t id3 = enqueue(db, "again", QUEUE_PRIO_BULK, NULL, 0);
	cr_assert_eq(db_wait_notify(listener, 5000, &n), 1);
	cr_assert_eq(strtoll(n.payload, NULL, 10), id3);
	struct queue_sub s;
	queue_sub_init(&s);
	cr_assert_eq(queue_get(db, id, 0, &s, err, sizeof err), 1, "nothing lost");
	queue_sub_release(&s);
	db_close(listener);

	/* a transaction cut by a restart fails as a whole: no half of it autocommits */
	cr_assert_eq(db_begin(db), 0);
	cr_assert_eq(db_exec(db, "INSERT INTO api_keys (name, hash) VALUES ('tx', 'a')", 0, NULL),
		     0);
	cr_assert_eq(pgembed_restart(own, err, sizeof err), 0, "%s", err);
	cr_assert_eq(db_exec(db, "INSERT INTO api_keys (name, hash) VALUES ('tx', 'b')", 0, NULL),
		     -1);
	cr_assert_eq(db_commit(db), -1);
	PGresult *r = db_query(db, "SELECT count(*) FROM api_keys WHERE name = 'tx'", 0, NULL);
	cr_assert(r, "reconnects after the failed transaction: %s", db_error(db));
	cr_assert_eq(db_value_ll(r, 0, 0), 0);
	PQclear(r);
	db_close(db);
	strbuf_release(&url);
}

/* db_query keeps statements prepared per connection (judge/store/db.c): the
 * same text runs again with new parameters, a table whose columns change under
 * a kept statement still answers with its new shape, an error in a statement is
 * reported as such, and more distinct statements than are kept still run. */
Test(db, kept_statements)
{
	struct db *db = fresh_db("t_stmts");
	cr_assert_eq(db_exec(db, "CREATE TABLE kv (k int PRIMARY KEY, v text)", 0, NULL), 0, "%s",
		     db_error(db));
	const char *ins = "INSERT INTO kv (k, v) VALUES ($1::int, $2)";
	for (int i = 0; i < 10; i++) {
		char k[16], v[16];
		snprintf(k, sizeof k, "%d", i);
		snprintf(v, sizeof v, "v%d", i);
		const char *p[] = {k, v};
		cr_assert_eq(db_exec(db, ins, 2, p), 0, "%s", db_error(db));
	}
	const char *sel = "SELECT * FROM kv WHERE k = $1::int";
	const char *p7[] = {"7"};
	PGresult *r = db_query(db, sel, 1, p7);
	cr_assert(r, "%s", db_error(db));
	cr_assert_eq(PQnfields(r), 2);
	cr_assert_str_eq(db_value(r, 0, 1), "v7");
	PQclear(r);

	/* a column more: the kept plan's result type changed */
	cr_assert_eq(db_exec(db, "ALTER TABLE kv ADD COLUMN w int DEFAULT 5", 0, NULL), 0, "%s",
		     db_error(db));
	r = db_query(db, sel, 1, p7);
	cr_assert(r, "after ALTER: %s", db_error(db));
	cr_assert_eq(PQnfields(r), 3);
	cr_assert_str_eq(db_value(r, 0, 2), "5");
	PQclear(r);

	/* a broken statement: its own error and SQLSTATE, the connection still fine */
	cr_assert_null(db_query(db, "SELEC k FROM kv WHERE k = $1::int", 1, p7));
	cr_assert_str_eq(db_sqlstate(db), "42601", "%s", db_error(db));
	cr_assert_null(db_query(db, "SELECT nosuch FROM kv WHERE k = $1::int", 1, p7));
	cr_assert_str_eq(db_sqlstate(db), "42703", "%s", db_error(db));
	/* inside a transaction too, and the transaction then reports aborted */
	cr_assert_eq(db_begin(db), 0);
	cr_assert_null(db_query(db, "SELECT nosuch2 FROM kv WHERE k = $1::int", 1, p7));
	cr_assert_str_eq(db_sqlstate(db), "42703");
	cr_assert_eq(db_commit(db), -1);

	/* many distinct statements: all answer right */
	for (int i = 0; i < 300; i++) {
		char sql[96], k[16];
		snprintf(sql, sizeof sql, "SELECT v, %d FROM kv WHERE k = $1::int", i);
		snprintf(k, sizeof k, "%d", i % 10);
		const char *p[] = {k};
		r = db_query(db, sql, 1, p);
		cr_assert(r, "%s: %s", sql, db_error(db));
		cr_assert_eq(PQntuples(r), 1);
		char want[16];
		snprintf(want, sizeof want, "v%d", i % 10);
		cr_assert_str_eq(db_value(r, 0, 0), want);
		cr_assert_eq(db_value_ll(r, 0, 1), i);
		PQclear(r);
	}
	/* the first ones again (kept) */
	r = db_query(db, sel, 1, p7);
	cr_assert(r, "%s", db_error(db));
	cr_assert_str_eq(db_value(r, 0, 1), "v7");
	PQclear(r);
	db_close(db);
}

/* ---- the queue policy (judge_claim, migrations/0008_fair_queue.sql) ---- */

/* Two API keys a and b (weights wa, wb); returns their ids in *a and *b. */
static void two_keys(struct db *db, int wa, int wb, int64_t *a, int64_t *b)
{
	char sql[256];
	snprintf(sql, sizeof sql,
		 "INSERT INTO api_keys (name, hash, weight) VALUES ('a', 'ha', %d), "
		 "('b', 'hb', %d) RETURNING id",
		 wa, wb);
	PGresult *r = db_query(db, sql, 0, NULL);
	cr_assert(r && PQntuples(r) == 2, "%s", db_error(db));
	*a = db_value_ll(r, 0, 0);
	*b = db_value_ll(r, 1, 0);
	PQclear(r);
}

/* Claims one; returns its API key id (0: keyless) and its id in *id. */
static int64_t claim_key(struct db *db, long lead_ms, int64_t *id)
{
	char err[512];
	struct queue_sub s;
	queue_sub_init(&s);
	cr_assert_eq(queue_claim(db, "w", 30000, lead_ms, &s, err, sizeof err), 1, "%s", err);
	int64_t k = s.api_key_id;
	if (id)
		*id = s.id;
	queue_sub_release(&s);
	return k;
}

/* A key that queued one submission after another key queued many gets the
 * next free slot: the claim goes to the key with the fewest running. */
Test(queue, a_quiet_key_goes_before_a_loud_keys_backlog)
{
	struct db *db = fresh_db("t_fair");
	int64_t a, b;
	two_keys(db, 1, 1, &a, &b);
	for (int i = 0; i < 10; i++)
		enqueue(db, "loud", QUEUE_PRIO_BULK, NULL, a);
	/* and interactive load of the loud key, newer than everything */
	for (int i = 0; i < 5; i++)
		enqueue(db, "loud-i", QUEUE_PRIO_INTERACTIVE, NULL, a);
	int64_t quiet = enqueue(db, "quiet", QUEUE_PRIO_BULK, NULL, b);
	/* a's oldest first (nobody runs anything: a tie, broken by age) ... */
	cr_assert_eq(claim_key(db, LEAD_MS, NULL), a);
	/* ... then b, which runs nothing while a runs one */
	int64_t id;
	cr_assert_eq(claim_key(db, LEAD_MS, &id), b);
	cr_assert_eq(id, quiet);
	/* b has nothing left: a gets the rest */
	for (int i = 0; i < 3; i++)
		cr_assert_eq(claim_key(db, LEAD_MS, NULL), a);
	db_close(db);
}

/* Weights share the workers: with a at 3 and b at 1, and both with a
 * backlog, running claims split 3 to 1. */
Test(queue, weights_share_the_workers)
{
	struct db *db = fresh_db("t_weights");
	int64_t a, b;
	two_keys(db, 3, 1, &a, &b);
	for (int i = 0; i < 20; i++) {
		enqueue(db, "a", QUEUE_PRIO_BULK, NULL, a);
		enqueue(db, "b", QUEUE_PRIO_BULK, NULL, b);
	}
	int na = 0, nb = 0;
	for (int i = 0; i < 8; i++) {
		int64_t k = claim_key(db, LEAD_MS, NULL);
		na += k == a;
		nb += k == b;
	}
	cr_assert_eq(na, 6, "a (weight 3) got %d of 8, b %d", na, nb);
	cr_assert_eq(nb, 2);
	/* a finish frees a's share: the next claim is a's again */
	cr_assert_eq(db_exec(db,
			     "UPDATE submissions SET status = 'accepted', finished = now(), "
			     "lease_until = NULL WHERE id = (SELECT min(id) FROM submissions WHERE "
			     "status = 'running' AND api_key_id = (SELECT id FROM api_keys WHERE "
			     "name = 'a'))",
			     0, NULL),
		     0, "%s", db_error(db));
	cr_assert_eq(claim_key(db, LEAD_MS, NULL), a);
	db_close(db);
}

/* Inside a key, an interactive request goes ahead of bulk work queued less
 * than the lead before it, and never ahead of older bulk work (aging). */
Test(queue, interactive_ahead_of_bulk_only_by_the_lead)
{
	struct db *db = fresh_db("t_aging");
	int64_t old = enqueue(db, "old bulk", QUEUE_PRIO_BULK, NULL, 0);
	int64_t young = enqueue(db, "young bulk", QUEUE_PRIO_BULK, NULL, 0);
	cr_assert_eq(db_exec(db,
			     "UPDATE submissions SET created = now() - interval '20 s' WHERE id = "
			     "(SELECT min(id) FROM submissions)",
			     0, NULL),
		     0, "%s", db_error(db));
	int64_t i1 = enqueue(db, "interactive", QUEUE_PRIO_INTERACTIVE, NULL, 0);
	int64_t i2 = enqueue(db, "interactive", QUEUE_PRIO_INTERACTIVE, NULL, 0);
	int64_t id;
	/* 20 s old with a lead of 10 s: ahead of the interactive requests */
	claim_key(db, 10000, &id);
	cr_assert_eq(id, old, "aged bulk work first, got %" PRId64, id);
	/* the young bulk submission waits behind both */
	claim_key(db, 10000, &id);
	cr_assert_eq(id, i1);
	claim_key(db, 10000, &id);
	cr_assert_eq(id, i2);
	claim_key(db, 10000, &id);
	cr_assert_eq(id, young);
	/* a lead of 0: first come, first served */
	int64_t b = enqueue(db, "bulk", QUEUE_PRIO_BULK, NULL, 0);
	enqueue(db, "interactive", QUEUE_PRIO_INTERACTIVE, NULL, 0);
	claim_key(db, 0, &id);
	cr_assert_eq(id, b);
	db_close(db);
}

/* The claim costs index probes, not a scan of the queue: its plan uses the
 * index made for it (a queue of many rows stays cheap to claim from). */
Test(queue, claim_reads_the_queue_through_its_index)
{
	struct db *db = fresh_db("t_plan");
	cr_assert_eq(db_exec(db,
			     "INSERT INTO submissions (request, priority) SELECT '{}'::jsonb, "
			     "(g % 2) * 10 FROM generate_series(1, 20000) g",
			     0, NULL),
		     0, "%s", db_error(db));
	cr_assert_eq(db_exec(db, "ANALYZE submissions", 0, NULL), 0);
	PGresult *r =
	    db_query(db,
		     "EXPLAIN SELECT id FROM submissions WHERE status = 'queued' AND "
		     "coalesce(api_key_id, 0) = 0 AND (priority > 0)::int = 0 ORDER BY id "
		     "LIMIT 1",
		     0, NULL);
	cr_assert(r, "%s", db_error(db));
	struct strbuf plan = STRBUF_INIT;
	for (int i = 0; i < PQntuples(r); i++)
		strbuf_addf(&plan, "%s\n", PQgetvalue(r, i, 0));
	PQclear(r);
	cr_assert(strstr(plan.buf, "submissions_fair"),
		  "the head probe does not use the index:\n%s", plan.buf);
	strbuf_release(&plan);
	int64_t t0 = clock_mono_us();
	for (int i = 0; i < 50; i++)
		claim_key(db, LEAD_MS, NULL);
	/* not a timing assertion: the claims worked on a queue of 20000 */
	cr_log_info("50 claims from a queue of 20000 in %lld us",
		    (long long)(clock_mono_us() - t0));
	db_close(db);
}

/* Revoking a key cancels its queued work (final, never run, its waiters told)
 * and closes its sessions (pending calls answered 410), in one statement;
 * another key's work is untouched, and running work finishes. */
Test(queue, revoking_a_key_cancels_its_queued_work_and_ends_its_sessions)
{
	struct db *db = fresh_db("t_revoke");
	char err[512];
	int64_t a, b;
	two_keys(db, 1, 1, &a, &b);
	int64_t run = enqueue(db, "running", QUEUE_PRIO_BULK, NULL, a);
	cr_assert_eq(claim_key(db, LEAD_MS, NULL), a);
	int64_t q1 = enqueue(db, "q1", QUEUE_PRIO_BULK, NULL, a);
	int64_t q2 = enqueue(db, "q2", QUEUE_PRIO_INTERACTIVE, NULL, a);
	int64_t other = enqueue(db, "other", QUEUE_PRIO_BULK, NULL, b);
	char sql[512];
	snprintf(sql, sizeof sql,
		 "INSERT INTO sessions (api_key_id, language, status, limits, idle_ttl_s, "
		 "expires_at, max_until) VALUES (%lld, 'python', 'ready', '{}', 600, now() + "
		 "interval '1 h', now() + interval '1 h'), (%lld, 'python', 'ready', '{}', 600, "
		 "now() + interval '1 h', now() + interval '1 h')",
		 (long long)a, (long long)b);
	cr_assert_eq(db_exec(db, sql, 0, NULL), 0, "%s", db_error(db));
	cr_assert_eq(db_exec(db,
			     "INSERT INTO session_calls (session_id, kind, request) SELECT id, "
			     "'execute', '{}' FROM sessions",
			     0, NULL),
		     0, "%s", db_error(db));
	struct db *listener;
	cr_assert_eq(db_open(&listener, schema_url, 10000, err, sizeof err), 0, "%s", err);
	cr_assert_eq(db_listen(listener, QUEUE_CHANNEL_DONE), 0);

	struct auth_revoked ended = {0};
	cr_assert_eq(auth_key_revoke(db, a, &ended, err, sizeof err), 1, "%s", err);
	cr_assert_eq(ended.cancelled, 2);
	cr_assert_eq(ended.sessions, 1);
	cr_assert_eq(auth_key_revoke(db, a, NULL, err, sizeof err), 0, "revoked once only");

	struct queue_sub s;
	queue_sub_init(&s);
	int64_t gone[] = {q1, q2};
	for (int i = 0; i < 2; i++) {
		cr_assert_eq(queue_get(db, gone[i], 0, &s, err, sizeof err), 1);
		cr_assert_eq(s.status, SUB_CANCELLED);
		cr_assert_str_eq(cJSON_GetObjectItem(s.result, "status")->valuestring, "cancelled");
		cr_assert_str_eq(cJSON_GetObjectItem(s.result, "message")->valuestring,
				 AUTH_REVOKED_REASON);
		cr_assert_gt(s.finished_ms, 0);
	}
	cr_assert_eq(queue_get(db, run, 0, &s, err, sizeof err), 1);
	cr_assert_eq(s.status, SUB_RUNNING, "running work finishes");
	cr_assert_eq(queue_get(db, other, 0, &s, err, sizeof err), 1);
	cr_assert_eq(s.status, SUB_QUEUED, "another key's work stays");
	queue_sub_release(&s);
	/* waiters are told, one judge_done per cancelled submission */
	struct db_notify n;
	int told = 0;
	while (db_wait_notify(listener, 2000, &n) == 1) {
		int64_t id = strtoll(n.payload, NULL, 10);
		told += id == q1 || id == q2;
		if (told == 2)
			break;
	}
	cr_assert_eq(told, 2);
	db_close(listener);
	PGresult *r =
	    db_query(db,
		     "SELECT s.api_key_id = (SELECT id FROM api_keys WHERE name = 'a'), "
		     "s.status, coalesce(s.close_reason, ''), c.state, "
		     "coalesce(c.response->>'http', '') FROM sessions s JOIN session_calls c "
		     "ON c.session_id = s.id ORDER BY 1 DESC",
		     0, NULL);
	cr_assert(r && PQntuples(r) == 2, "%s", db_error(db));
	cr_assert_str_eq(PQgetvalue(r, 0, 1), "closed");
	cr_assert_str_eq(PQgetvalue(r, 0, 2), AUTH_REVOKED_REASON);
	cr_assert_str_eq(PQgetvalue(r, 0, 3), "done");
	cr_assert_str_eq(PQgetvalue(r, 0, 4), "410");
	cr_assert_str_eq(PQgetvalue(r, 1, 1), "ready", "another key's session stays");
	cr_assert_str_eq(PQgetvalue(r, 1, 3), "pending");
	PQclear(r);
	/* the next claim is the other key's: nothing of a's is queued */
	cr_assert_eq(claim_key(db, LEAD_MS, NULL), b);
	db_close(db);
}
