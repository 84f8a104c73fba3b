/* test_outstream: the live output writer and reader against a real, private
 * PostgreSQL: batching, order, NOTIFY, the done a final submission gets from
 * the database, a stalled database (the writer drops, never blocks), pruning. */
#include <criterion/criterion.h>
#include <criterion/hooks.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/clock.h"
#include "common/strbuf.h"
#include "judge/service/outstream.h"
#include "judge/service/queue.h"
#include "judge/store/db.h"
#include "judge/store/migrate.h"
#include "judge/store/pgembed.h"

/* judge.ini's default interactive_lead_ms: bulk work's aging in the claim */
#define LEAD_MS 10000

static struct pgembed *cluster;
static char cluster_dir[256];

ReportHook(PRE_ALL)(struct criterion_test_set *set)
{
	(void)set;
	char err[512], pg[300];
	snprintf(cluster_dir, sizeof cluster_dir, "/tmp/judge-test-outstream.XXXXXX");
	if (!mkdtemp(cluster_dir))
		exit(1);
	chmod(cluster_dir, 0755); /* the cluster runs as the unprivileged `judge` */
	snprintf(pg, sizeof pg, "%s/pg", cluster_dir);
	srand((unsigned)(time(NULL) ^ getpid()));
	int port = 20000 + rand() % 20000;
	if (pgembed_start(pg, port, &cluster, err, sizeof err) < 0) {
		fprintf(stderr, "test_outstream: cannot start PostgreSQL: %s\n", err);
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
	char cmd[300];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", cluster_dir);
	if (system(cmd) != 0)
		fprintf(stderr, "cannot remove %s\n", cluster_dir);
}

static char url[1024];

/* A migrated schema of the test's own; url is set to reach it. */
static struct db *fresh_db(const char *schema)
{
	const char *base = getenv("JUDGE_TEST_PG_URL");
	char err[512], sql[256];
	struct db *db;
	cr_assert_eq(db_open(&db, base, 10000, err, sizeof err), 0, "%s", err);
	snprintf(sql, sizeof sql, "DROP SCHEMA IF EXISTS %s CASCADE", schema);
	cr_assert_eq(db_exec(db, sql, 0, NULL), 0, "%s", db_error(db));
	snprintf(sql, sizeof sql, "CREATE SCHEMA %s", schema);
	cr_assert_eq(db_exec(db, sql, 0, NULL), 0, "%s", db_error(db));
	db_close(db);
	snprintf(url, sizeof url, "%s options='-c search_path=%s'", base, schema);
	cr_assert_eq(db_open(&db, url, 10000, err, sizeof err), 0, "%s", err);
	int applied;
	cr_assert_eq(migrate_run(db, &applied, err, sizeof err), 0, "%s", err);
	return db;
}

/* All events of stream id as "event:data|...". Returns the count. */
static int read_all(struct db *db, const char *id, struct strbuf *out)
{
	struct outstream_chunk *c;
	char err[256];
	int n = outstream_read(db, id, 0, 1000, 1 << 30, &c, err, sizeof err);
	cr_assert_geq(n, 0, "%s", err);
	for (int i = 0; i < n; i++) {
		strbuf_addf(out, "%s:%s|", c[i].event, c[i].data);
		if (i)
			cr_assert_gt(c[i].seq, c[i - 1].seq);
	}
	outstream_chunks_free(c, n);
	return n;
}

Test(outstream, writes_in_batches_in_order_and_notifies)
{
	struct db *db = fresh_db("t_batches");
	cr_assert_eq(db_listen(db, OUTSTREAM_CHANNEL), 0);
	struct outstream *o = outstream_open(url);
	outstream_begin(o, "cell:7");
	/* 1000 small prints within a few ms: a handful of batches, not 1000 */
	for (int i = 0; i < 1000; i++) {
		char line[16];
		int n = snprintf(line, sizeof line, "%d\n", i);
		outstream_output(o, 1, line, (size_t)n);
	}
	outstream_event(o, "test", "{\"name\":\"1\",\"status\":\"accepted\"}");
	outstream_output(o, 2, "oops\n", 5);
	outstream_event(o, "done", "{}");
	cr_assert_eq(outstream_flush(o, 5000), 0);
	cr_assert_leq(outstream_batches(o), 5, "%ld batches", outstream_batches(o));
	struct db_notify nt;
	cr_assert_eq(db_wait_notify(db, 2000, &nt), 1);
	cr_assert_str_eq(nt.payload, "cell:7");

	struct strbuf all = STRBUF_INIT;
	read_all(db, "cell:7", &all);
	struct strbuf want = STRBUF_INIT;
	strbuf_addstr(&want, "stdout:\"");
	for (int i = 0; i < 1000; i++)
		strbuf_addf(&want, "%d\\n", i);
	strbuf_addstr(&want, "\"|test:{\"name\":\"1\",\"status\":\"accepted\"}|stderr:\"oops\\n\"|"
			     "done:{}|");
	cr_assert_str_eq(all.buf, want.buf);

	/* after: only what follows */
	struct outstream_chunk *c;
	char err[256];
	int n = outstream_read(db, "cell:7", 0, 2, 1 << 20, &c, err, sizeof err);
	cr_assert_eq(n, 2);
	int64_t second = c[1].seq;
	outstream_chunks_free(c, n);
	n = outstream_read(db, "cell:7", second, 100, 1 << 20, &c, err, sizeof err);
	cr_assert_eq(n, 2);
	cr_assert_str_eq(c[1].event, "done");
	outstream_chunks_free(c, n);
	outstream_close(o);
	strbuf_release(&all);
	strbuf_release(&want);
	db_close(db);
}

Test(outstream, a_submission_gets_done_when_it_becomes_final)
{
	struct db *db = fresh_db("t_done");
	char err[256];
	cJSON *rq = cJSON_Parse("{\"language\":\"python\",\"source\":\"print(1)\"}");
	struct queue_new qn = {.request = rq, .priority = 0};
	int64_t id;
	cr_assert_eq(queue_enqueue(db, &qn, &id, NULL, err, sizeof err), 0, "%s", err);
	struct queue_sub s;
	queue_sub_init(&s);
	cr_assert_eq(queue_claim(db, "w", 30000, LEAD_MS, &s, err, sizeof err), 1, "%s", err);
	char sid[64];
	snprintf(sid, sizeof sid, "sub:%" PRId64, id);
	struct strbuf all = STRBUF_INIT;
	cr_assert_eq(read_all(db, sid, &all), 0, "running: no done yet");
	cJSON *res = cJSON_Parse("{\"status\":\"completed\"}");
	cr_assert_eq(queue_finish(db, id, "w", 1, SUB_COMPLETED, res, err, sizeof err), 0, "%s",
		     err);
	read_all(db, sid, &all);
	char want[128];
	snprintf(want, sizeof want, "done:{\"id\" : %" PRId64 ", \"status\" : \"completed\"}|", id);
	cr_assert_str_eq(all.buf, want);
	cJSON_Delete(rq);
	cJSON_Delete(res);
	queue_sub_release(&s);
	strbuf_release(&all);
	db_close(db);
}

Test(outstream, a_stalled_database_never_blocks_the_writer)
{
	struct db *db = fresh_db("t_stall");
	struct db *locker;
	char err[256];
	cr_assert_eq(db_open(&locker, url, 10000, err, sizeof err), 0, "%s", err);
	cr_assert_eq(db_begin(locker), 0);
	cr_assert_eq(db_exec(locker, "LOCK TABLE output_chunks IN ACCESS EXCLUSIVE MODE", 0, NULL),
		     0, "%s", db_error(locker));
	struct outstream *o = outstream_open(url);
	outstream_begin(o, "sub:1");
	static char block[4096];
	memset(block, 'z', sizeof block);
	/* the first bytes go into an INSERT that waits for the lock */
	outstream_output(o, 1, block, sizeof block);
	clock_sleep_ms(OUTSTREAM_FLUSH_MS + 150);
	int64_t t0 = clock_mono_ms();
	for (int i = 0; i < 1024; i++) /* 4 MiB, five times the backlog */
		outstream_output(o, 1, block, sizeof block);
	cr_assert_lt(clock_mono_ms() - t0, 500, "the writer blocked");
	cr_assert_eq(outstream_flush(o, 200), -1, "cannot be all written");
	db_rollback(locker); /* the database is back */
	outstream_event(o, "done", "{}");
	outstream_flush(o, 5000);
	struct strbuf all = STRBUF_INIT;
	read_all(db, "sub:1", &all);
	cr_assert(strstr(all.buf, "truncated:{\"reason\":\"backlog\""), "%.200s",
		  strstr(all.buf, "truncated") ? strstr(all.buf, "truncated") : "none");
	cr_assert(strstr(all.buf, "|done:{}|"));
	/* the block in the waiting INSERT, then at most the backlog */
	cr_assert_lt(all.len, OUTSTREAM_BACKLOG_BYTES + 3 * 4096);
	outstream_close(o);
	strbuf_release(&all);
	db_close(locker);
	db_close(db);
}

Test(outstream, prune_removes_ended_streams_only)
{
	struct db *db = fresh_db("t_prune");
	struct outstream *o = outstream_open(url);
	outstream_begin(o, "cell:ended");
	outstream_output(o, 1, "a", 1);
	outstream_event(o, "done", "{}");
	cr_assert_eq(outstream_flush(o, 5000), 0);
	outstream_begin(o, "cell:running");
	outstream_output(o, 1, "b", 1);
	cr_assert_eq(outstream_flush(o, 5000), 0);
	outstream_close(o);
	char err[256];
	cr_assert_eq(outstream_prune(db, 3600, 86400, err, sizeof err), 0, "%s", err);
	clock_sleep_ms(1100);
	cr_assert_eq(outstream_prune(db, 1, 86400, err, sizeof err), 2, "%s", err);
	struct strbuf all = STRBUF_INIT;
	cr_assert_eq(read_all(db, "cell:ended", &all), 0);
	cr_assert_eq(read_all(db, "cell:running", &all), 1);
	long pruned = outstream_prune(db, 1, 1, err, sizeof err);
	cr_assert_eq(pruned, 1, "%ld", pruned);
	strbuf_release(&all);
	db_close(db);
}

Test(outstream, a_small_output_is_written_within_the_batch_time)
{
	struct db *db = fresh_db("t_latency");
	struct outstream *o = outstream_open(url);
	outstream_begin(o, "cell:1");
	/* a writer idle for a while: its thread must wake for the first bytes.
	 * An idle writer waits up to 1 s: without the wake-up the bytes would come
	 * ~950 ms after they were given; with it, after OUTSTREAM_FLUSH_MS. The
	 * bound lies between the two with room for a loaded machine. */
	clock_sleep_ms(100);
	int64_t t0 = clock_mono_ms();
	outstream_output(o, 1, "x", 1);
	struct strbuf all = STRBUF_INIT;
	while (!read_all(db, "cell:1", &all) && clock_mono_ms() - t0 < 2000)
		clock_sleep_ms(5);
	int64_t took = clock_mono_ms() - t0;
	cr_assert_str_eq(all.buf, "stdout:\"x\"|");
	cr_assert_lt(took, 700, "took %lld ms", (long long)took);
	outstream_close(o);
	strbuf_release(&all);
	db_close(db);
}

/* Writers of one pool (a session's processes): many at once, each stream
 * whole and in order, and no connection of their own: the pool's one
 * connection serves them all (pg_stat_activity counts the pool's by its
 * application_name), and it is back in the pool after each batch. */
Test(outstream, pooled_writers_share_the_pools_connections)
{
	struct db *db = fresh_db("t_pooled");
	char err[256];
	struct db_pool *pool;
	char named[1100];
	snprintf(named, sizeof named, "%s application_name=t_pooled", url);
	cr_assert_eq(db_pool_new(&pool, named, 1, 10000, err, sizeof err), 0, "%s", err);
	struct outstream *o[8];
	for (int i = 0; i < 8; i++) {
		char id[32];
		snprintf(id, sizeof id, "proc:s:%d", i);
		o[i] = outstream_open_pooled(pool);
		cr_assert_not_null(o[i]);
		outstream_begin(o[i], id);
		outstream_event(o[i], "start", "{}");
		outstream_output(o[i], 1, "a\n", 2);
	}
	for (int i = 0; i < 8; i++) {
		outstream_output(o[i], 2, "b\n", 2);
		outstream_event(o[i], "done", "{}");
		cr_assert_eq(outstream_flush(o[i], 5000), 0);
	}
	PGresult *res = db_query(
	    db, "SELECT count(*) FROM pg_stat_activity WHERE application_name = 't_pooled'", 0,
	    NULL);
	cr_assert_not_null(res, "%s", db_error(db));
	cr_expect_eq(db_value_ll(res, 0, 0), 1, "%lld connections", db_value_ll(res, 0, 0));
	PQclear(res);
	for (int i = 0; i < 8; i++) {
		char id[32];
		snprintf(id, sizeof id, "proc:s:%d", i);
		struct strbuf all = STRBUF_INIT;
		read_all(db, id, &all);
		cr_expect_str_eq(all.buf, "start:{}|stdout:\"a\\n\"|stderr:\"b\\n\"|done:{}|", "%s",
				 id);
		strbuf_release(&all);
		outstream_close(o[i]);
	}
	/* the connection is free again: a caller gets it at once */
	struct db *back = db_pool_get(pool, 0);
	cr_expect_not_null(back);
	db_pool_put(pool, back);
	db_pool_free(pool);
	db_close(db);
}
