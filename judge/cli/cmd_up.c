/* cmd_up: `judge up`, the whole service on one machine: database, migrations, serve and a worker.
 *
 * How it works: with an empty database_url the embedded cluster is started
 * (pgembed.h) and stopped again at the end; the schema is migrated; then
 * `judge serve` and `judge worker` run as child processes of this one (serve
 * drops its privileges for the whole process, the worker needs root for its
 * sandboxes: they cannot share a process). The children get the same
 * --config, read from /proc/self/cmdline. A child that dies is restarted,
 * unless it dies right after its start (a configuration error: then all
 * stops). SIGTERM / SIGINT / SIGHUP are passed on to both children once, which
 * drain; this process waits for them and exits 0. The children lead process
 * groups of their own: a Ctrl-C (SIGINT to the terminal's foreground group) or
 * a SIGTERM to our whole group reaches only this process, so a stop is one
 * signal to the worker, not two; a second one is passed on as a second (the
 * worker hands back at once). After the children ended, what a dead worker
 * left under box_root (one killed, or one that crashed) is reclaimed here
 * (runner/owner.h), so nothing stays behind `judge up` whatever happened.
 */
#include <arpa/inet.h>
#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "judge/service/auth.h"
#include "judge/cli/cmd.h"
#include "judge/cli/home.h"
#include "common/clock.h"
#include "common/config.h"
#include "judge/store/db.h"
#include "common/log.h"
#include "judge/store/migrate.h"
#include "judge/store/pgembed.h"
#include "judge/grading/lang.h"
#include "runner/sandbox.h"
#include "common/strbuf.h"
#include "common/xalloc.h"

/* A child that exits sooner than this after its start is not restarted. */
#define QUICK_EXIT_MS 5000

struct child {
	const char *role; /* "serve" or "worker" */
	pid_t pid;
	int64_t started_ms; /* clock_mono_ms() */
	int restarts;
};

/* The global options given before `up` (e.g. --config FILE), from
 * /proc/self/cmdline, so the children read the same configuration. */
static int global_args(char ***out, int *n)
{
	struct strbuf sb = STRBUF_INIT;
	int rc = strbuf_read_file(&sb, "/proc/self/cmdline", 1 << 20);
	if (rc < 0) {
		strbuf_release(&sb);
		return -1;
	}
	char **args = xcalloc(sb.len + 3, sizeof *args); /* + a --config FILE */
	int count = 0;
	bool first = true;
	for (size_t off = 0; off < sb.len;) {
		const char *a = sb.buf + off;
		off += strlen(a) + 1;
		if (first) { /* argv[0] */
			first = false;
			continue;
		}
		if (!strcmp(a, "up"))
			break;
		args[count++] = xstrdup(a);
	}
	strbuf_release(&sb);
	*out = args;
	*n = count;
	return 0;
}

static pid_t spawn(const char *role, char **gargs, int ngargs)
{
	char *argv[64];
	int k = 0;
	argv[k++] = "judge";
	for (int i = 0; i < ngargs && k < 60; i++)
		argv[k++] = gargs[i];
	argv[k++] = (char *)role;
	argv[k] = NULL;
	pid_t parent = getpid();
	pid_t pid = fork();
	if (pid == 0) {
		/* a killed `judge up` must not leave serve and worker behind */
		prctl(PR_SET_PDEATHSIG, SIGTERM);
		if (getppid() != parent)
			_exit(1);
		/* signals to our group (the terminal's Ctrl-C) are ours to pass on */
		setpgid(0, 0);
		sigset_t none;
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		execv("/proc/self/exe", argv);
		fprintf(stderr, "judge up: cannot run judge %s: %s\n", role, strerror(errno));
		_exit(127);
	}
	if (pid > 0)
		setpgid(pid, pid); /* as the child does: whichever runs first */
	return pid;
}

/* host and port of cfg->listen ("host:port", "[v6]:port"). */
static int split_listen(const char *listen, char *host, size_t hostlen, char *port, size_t portlen)
{
	const char *colon = strrchr(listen, ':');
	if (!colon)
		return -1;
	const char *h = listen;
	size_t hl = (size_t)(colon - listen);
	if (hl >= 2 && h[0] == '[' && h[hl - 1] == ']') {
		h++;
		hl -= 2;
	}
	if (hl == 0) {
		h = "127.0.0.1";
		hl = strlen(h);
	}
	/* a wildcard listener is reached on loopback */
	if ((hl == 7 && !strncmp(h, "0.0.0.0", 7)) || (hl == 2 && !strncmp(h, "::", 2))) {
		h = hl == 2 ? "::1" : "127.0.0.1";
		hl = strlen(h);
	}
	snprintf(host, hostlen, "%.*s", (int)hl, h);
	snprintf(port, portlen, "%s", colon + 1);
	return 0;
}

/* True when GET /health answers 200. */
static bool health_ok(const char *host, const char *port)
{
	struct addrinfo hints = {.ai_socktype = SOCK_STREAM}, *ai = NULL;
	if (getaddrinfo(host, port, &hints, &ai) != 0)
		return false;
	bool ok = false;
	int fd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	struct timeval tv = {2, 0};
	if (fd >= 0) {
		setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
		setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
	}
	if (fd >= 0 && connect(fd, ai->ai_addr, ai->ai_addrlen) == 0) {
		static const char req[] = "GET /health HTTP/1.0\r\nHost: judge\r\n\r\n";
		char buf[64] = "";
		if (write(fd, req, sizeof req - 1) == (ssize_t)(sizeof req - 1)) {
			ssize_t n = read(fd, buf, sizeof buf - 1);
			if (n > 12) {
				buf[n] = 0;
				ok = !strncmp(buf, "HTTP/1.", 7) && !strncmp(buf + 9, "200", 3);
			}
		}
	}
	if (fd >= 0)
		close(fd);
	freeaddrinfo(ai);
	return ok;
}

/* The API key of the printed example: kept in state_dir/api-key (0600) so the
 * example keeps working across restarts; a new one when it was revoked. */
static int example_key(const struct judge_config *cfg, struct db *db, char key[AUTH_KEY_LEN + 1])
{
	struct strbuf path = STRBUF_INIT, old = STRBUF_INIT;
	int ret = -1;
	char err[512];
	strbuf_addf(&path, "%s/api-key", cfg->state_dir);
	if (strbuf_read_file(&old, path.buf, 256) == 0) {
		while (old.len && (old.buf[old.len - 1] == '\n' || old.buf[old.len - 1] == ' '))
			old.buf[--old.len] = 0;
		unsigned char h[32];
		char hex[65];
		auth_sha256(old.buf, old.len, h);
		for (int i = 0; i < 32; i++)
			snprintf(hex + 2 * i, 3, "%02x", h[i]);
		const char *p[] = {hex};
		PGresult *r = db_query(
		    db, "SELECT 1 FROM api_keys WHERE hash = $1 AND revoked IS NULL", 1, p);
		bool valid = r && PQntuples(r) == 1;
		PQclear(r);
		if (valid && old.len == AUTH_KEY_LEN) {
			memcpy(key, old.buf, AUTH_KEY_LEN + 1);
			ret = 0;
			goto out;
		}
	}
	int64_t id;
	/* with database_url set, nothing made state_dir yet */
	if (mkdir(cfg->state_dir, 0755) < 0 && errno != EEXIST)
		log_warn("up: cannot create '%s': %s", cfg->state_dir, strerror(errno));
	/* the operator's own key: it opens the dashboard too */
	if (auth_key_create_as(db, "judge up example", true, key, &id, err, sizeof err) < 0) {
		log_warn("up: cannot create an API key for the example: %s", err);
		goto out;
	}
	int fd = open(path.buf, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0 || write(fd, key, AUTH_KEY_LEN) != AUTH_KEY_LEN || write(fd, "\n", 1) != 1)
		log_warn("up: cannot save the example key in %s", path.buf);
	if (fd >= 0)
		close(fd);
	ret = 0;
out:
	strbuf_release(&path);
	strbuf_release(&old);
	return ret;
}

/* The example's body: the default language's self-test program, which prints
 * "hello world" (languages/selftest), as JSON quoted for a shell's '...'. */
static char *example_body(const struct judge_config *cfg)
{
	struct lang_registry langs;
	char err[256];
	struct strbuf src = STRBUF_INIT, path = STRBUF_INIT, out = STRBUF_INIT;
	cJSON *o = cJSON_CreateObject();
	if (lang_load_dir(&langs, cfg->languages_dir, err, sizeof err) == 0) {
		const struct lang *l = lang_default(&langs);
		const char *ext = l ? strrchr(l->source_file, '.') : NULL;
		if (l) {
			strbuf_addf(&path, "%s/selftest/%s%s", cfg->languages_dir, l->name,
				    ext ? ext : "");
			cJSON_AddStringToObject(o, "language", l->name);
		}
		if (l && strbuf_read_file(&src, path.buf, 4096) == 0)
			cJSON_AddStringToObject(o, "source", src.buf ? src.buf : "");
		lang_registry_release(&langs);
	}
	cJSON_AddStringToObject(o, "expected_output", "hello world\n");
	char *json = cJSON_PrintUnformatted(o);
	for (const char *p = json; *p; p++)
		if (*p == '\'')
			strbuf_addstr(&out, "'\\''");
		else
			strbuf_addch(&out, *p);
	free(json);
	cJSON_Delete(o);
	strbuf_release(&src);
	strbuf_release(&path);
	return strbuf_detach(&out, NULL);
}

static void print_banner(const struct judge_config *cfg, const char *host, const char *port,
			 const char *key)
{
	bool v6 = strchr(host, ':') != NULL;
	struct strbuf base = STRBUF_INIT;
	strbuf_addf(&base, "http://%s%s%s:%s", v6 ? "[" : "", host, v6 ? "]" : "", port);
	printf("\njudge is up: API on %s (sandbox: %s, database: %s)\n", base.buf, cfg->sandbox,
	       cfg->database_url[0] ? "database_url" : "embedded, under state_dir/pg");
	/* the key rides in the fragment, which the browser never sends: the page
	 * moves it to sessionStorage and clears it from the address bar */
	printf("\nopen %s/%s%s in a browser to run and grade programs (operators: "
	       "%s/dashboard)\n\nor try:\n\n",
	       base.buf, key ? "#key=" : "", key ? key : "", base.buf);
	printf("curl -s %s/v1/execute_with_expected \\\n", base.buf);
	if (key)
		printf("  -H 'Authorization: Bearer %s' \\\n", key);
	char *body = example_body(cfg);
	printf("  -H 'Content-Type: application/json' \\\n  -d '%s'\n\n", body);
	free(body);
	if (key)
		printf(
		    "(the key is kept in %s/api-key; more keys: judge keys create --name NAME)\n",
		    cfg->state_dir);
	printf("stop with Ctrl-C or SIGTERM\n\n");
	fflush(stdout);
	strbuf_release(&base);
}

static void stop_children(struct child *kids, int n, int sig)
{
	for (int i = 0; i < n; i++)
		if (kids[i].pid > 0)
			kill(kids[i].pid, sig);
}

/* The state of one `judge up`. */
struct up {
	struct judge_config *cfg;
	struct child kids[2];
	sigset_t sigs; /* SIGTERM, SIGINT, SIGCHLD: blocked, taken with sigwait */
	char **gargs;  /* global options for the children (global_args) */
	int ngargs;
	char host[256], port[32]; /* where the API answers (split_listen) */
};

/* How often start-up and the drain look at the children. */
static const struct timespec tick = {0, 200 * 1000000L};

static int exit_code(int st)
{
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* Parses `up`'s own arguments; `judge up --config FILE` (as make run says)
 * reloads cfg from FILE and sets *config_after. Returns -1 to go on, else the
 * exit code (usage, or a configuration that does not load). */
static int parse_args(int argc, char **argv, struct judge_config *cfg, const char **config_after)
{
	*config_after = NULL;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--config") && i + 1 < argc) {
			*config_after = argv[++i];
			continue;
		}
		if (!strncmp(argv[i], "--config=", 9)) {
			*config_after = argv[i] + 9;
			continue;
		}
		bool help = !strcmp(argv[i], "--help") || !strcmp(argv[i], "-h");
		fprintf(help ? stdout : stderr,
			"usage: judge [--config FILE] up [--config FILE]\n"
			"runs the service on this machine: the embedded database when database_url "
			"is empty, migrations, judge serve and judge worker\n");
		return help ? 0 : 2;
	}
	if (*config_after) {
		char cerr[512];
		config_release(cfg);
		config_defaults(cfg);
		if (config_load(cfg, *config_after, true, cerr, sizeof cerr) < 0) {
			fprintf(stderr, "judge up: %s\n", cerr);
			return 2;
		}
		home_place_defaults(cfg);
		int lvl = log_parse_level(cfg->log_level);
		if (lvl >= 0)
			log_min_level = (enum log_level)lvl;
	}
	return -1;
}

/* Opens the database (starting the embedded cluster into *embed when
 * database_url is empty: the caller stops it), migrates the schema and gets
 * the example's API key (*have_key). The connection is closed again. Returns
 * 0, or -1 (logged). */
static int start_database(struct judge_config *cfg, struct strbuf *url, struct pgembed **embed,
			  char key[AUTH_KEY_LEN + 1], bool *have_key)
{
	struct db *db = NULL;
	char err[1024];
	int ret = -1;
	if (db_config_url(cfg, true, url, embed, err, sizeof err) < 0 ||
	    db_open(&db, url->buf, 30000, err, sizeof err) < 0) {
		log_error("up: %s", err);
		goto out;
	}
	int applied = 0;
	if (migrate_run(db, &applied, err, sizeof err) < 0) {
		log_error("up: %s", err);
		goto out;
	}
	*have_key = !strcmp(cfg->auth, "on") && example_key(cfg, db, key) == 0;
	ret = 0;
out:
	db_close(db);
	return ret;
}

/* Starts serve and worker and waits up to 60 s for the API. Returns true when
 * it answers; false when a signal came, a child died at its start or the time
 * ran out (all logged but the signal). */
static bool start_children(struct up *u)
{
	for (int i = 0; i < 2; i++) {
		u->kids[i].pid = spawn(u->kids[i].role, u->gargs, u->ngargs);
		u->kids[i].started_ms = clock_mono_ms();
	}
	/* wait for the API before printing the example */
	bool up = false;
	int64_t deadline = clock_deadline_ms(60000);
	bool stopping = false;
	while (!up && !stopping && clock_mono_ms() < deadline) {
		int sig = sigtimedwait(&u->sigs, NULL, &tick);
		if (sig == SIGTERM || sig == SIGINT || sig == SIGHUP) {
			stopping = true;
			break;
		}
		int st;
		pid_t p;
		while ((p = waitpid(-1, &st, WNOHANG)) > 0)
			for (int i = 0; i < 2; i++)
				if (u->kids[i].pid == p) {
					log_error("up: judge %s exited at start (status %d)",
						  u->kids[i].role, exit_code(st));
					u->kids[i].pid = 0;
					stopping = true;
				}
		up = !stopping && health_ok(u->host, u->port);
	}
	if (!up && !stopping)
		log_error("up: the API did not answer on %s within 60 s", u->cfg->listen);
	return up;
}

/* Child k exited with status st under supervision: restarts it, unless it
 * exited right after its start. Returns false then (stop everything). */
static bool restart_child(struct up *u, struct child *k, int st)
{
	int code = exit_code(st);
	k->pid = 0;
	bool quick = clock_mono_ms() - k->started_ms < QUICK_EXIT_MS;
	/* a quick exit is a start-up error (config, port); a kill is not */
	if (quick && WIFEXITED(st)) {
		log_error("up: judge %s exited right after its start (status %d); stopping",
			  k->role, code);
		return false;
	}
	log_warn("up: judge %s exited (status %d); restarting it", k->role, code);
	if (quick)
		sleep(1); /* no tight loop of restarts */
	k->pid = spawn(k->role, u->gargs, u->ngargs);
	k->started_ms = clock_mono_ms();
	k->restarts++;
	return true;
}

/* Supervises the children until SIGTERM / SIGINT / SIGHUP. Returns true when it
 * stopped because a child failed at its start instead. */
static bool supervise(struct up *u)
{
	bool stopping = false;
	while (!stopping) {
		int sig = sigwaitinfo(&u->sigs, NULL);
		if (sig == SIGTERM || sig == SIGINT || sig == SIGHUP) {
			log_info("up: signal %d: stopping serve and worker", sig);
			break;
		}
		int st;
		pid_t p;
		while ((p = waitpid(-1, &st, WNOHANG)) > 0)
			for (int i = 0; i < 2; i++)
				if (u->kids[i].pid == p && !restart_child(u, &u->kids[i], st))
					stopping = true;
	}
	return stopping;
}

/* Drain: the children get SIGTERM and are waited for; the worker may take
 * drain_s, then both are killed. A second signal is passed on. Then what
 * ended workers left under box_root is reclaimed. */
static void drain(struct up *u)
{
	struct child *kids = u->kids;
	stop_children(kids, 2, SIGTERM);
	int64_t deadline = clock_deadline_ms((u->cfg->drain_s + 15) * 1000);
	for (;;) {
		int st;
		pid_t p;
		while ((p = waitpid(-1, &st, WNOHANG)) > 0)
			for (int i = 0; i < 2; i++)
				if (kids[i].pid == p) {
					kids[i].pid = 0;
					if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
						log_warn("up: judge %s ended with status %d",
							 kids[i].role, exit_code(st));
				}
		if (kids[0].pid <= 0 && kids[1].pid <= 0)
			break;
		if (clock_mono_ms() > deadline) {
			log_warn("up: children did not stop in time; killing them");
			stop_children(kids, 2, SIGKILL);
			deadline = clock_deadline_ms(5000);
		}
		int sig = sigtimedwait(&u->sigs, NULL, &tick);
		if (sig == SIGTERM || sig == SIGINT || sig == SIGHUP) {
			/* a second signal: the worker hands back and stops at once */
			log_info("up: signal %d again: passing it on", sig);
			stop_children(kids, 2, SIGTERM);
		}
	}
	/* a worker that was killed (or crashed, or did not stop in time) left its
	 * sandboxes: its owner folder is free now */
	int n = sandbox_reclaim_dead(u->cfg->box_root);
	if (n > 0)
		log_info("up: reclaimed what %d ended worker%s left", n, n == 1 ? "" : "s");
}

int cmd_up(int argc, char **argv, struct judge_config *cfg)
{
	const char *config_after;
	int code = parse_args(argc, argv, cfg, &config_after);
	if (code >= 0)
		return code;
	int ret = 1;
	struct strbuf url = STRBUF_INIT;
	struct pgembed *embed = NULL;
	struct up u = {.cfg = cfg, .kids = {{.role = "serve"}, {.role = "worker"}}};
	sigemptyset(&u.sigs);
	sigaddset(&u.sigs, SIGTERM);
	sigaddset(&u.sigs, SIGINT);
	sigaddset(&u.sigs, SIGHUP);
	sigaddset(&u.sigs, SIGCHLD);
	sigprocmask(SIG_BLOCK, &u.sigs, NULL);

	if (split_listen(cfg->listen, u.host, sizeof u.host, u.port, sizeof u.port) < 0) {
		log_error("up: listen must be host:port, got '%s'", cfg->listen);
		goto out;
	}
	if (global_args(&u.gargs, &u.ngargs) < 0) {
		log_error("up: cannot read /proc/self/cmdline");
		goto out;
	}
	if (config_after && u.ngargs + 2 < 60) { /* the later --config wins in main too */
		u.gargs[u.ngargs++] = xstrdup("--config");
		u.gargs[u.ngargs++] = xstrdup(config_after);
	}
	char key[AUTH_KEY_LEN + 1];
	bool have_key = false;
	if (start_database(cfg, &url, &embed, key, &have_key) < 0)
		goto out;

	bool failed = true;
	if (start_children(&u)) {
		print_banner(cfg, u.host, u.port, have_key ? key : NULL);
		failed = supervise(&u);
	}
	drain(&u);
	ret = failed ? 1 : 0;
out:
	pgembed_stop(embed);
	strbuf_release(&url);
	for (int i = 0; i < u.ngargs; i++)
		free(u.gargs[i]);
	free(u.gargs);
	return ret;
}
