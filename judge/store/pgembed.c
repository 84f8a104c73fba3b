/* pgembed: a private PostgreSQL cluster under state_dir/pg (initdb + pg_ctl), the default database.
 *
 * PostgreSQL refuses to run as root, so as root every initdb/pg_ctl call is
 * made by a forked child that switches to the `judge` system user first. The
 * server listens only on a unix socket in DIR/run; settings that depend on
 * where DIR is live in DIR/data/judge.conf, rewritten at each start so a moved
 * state_dir still works.
 */
#include "judge/store/pgembed.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <libpq-fe.h>
#include <pwd.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/log.h"
#include "common/xalloc.h"

#define EMBED_USER "judge"

struct pgembed {
	char *dir;
	int port;
	uid_t uid;
	gid_t gid;
	bool owned; /* this process started the server */
};

static const char *bindir(void)
{
	const char *b = getenv("JUDGE_PG_BINDIR");
	return b && *b ? b : PGEMBED_BINDIR;
}

/* conninfo values are quoted: the folder may hold spaces or quotes */
static void add_quoted(struct strbuf *sb, const char *v)
{
	strbuf_addch(sb, '\'');
	for (; *v; v++) {
		if (*v == '\'' || *v == '\\')
			strbuf_addch(sb, '\\');
		strbuf_addch(sb, *v);
	}
	strbuf_addch(sb, '\'');
}

void pgembed_url(const char *dir, int port, struct strbuf *url)
{
	struct strbuf run = STRBUF_INIT;
	strbuf_addf(&run, "%s/run", dir);
	strbuf_addstr(url, "host=");
	add_quoted(url, run.buf);
	strbuf_addf(url, " port=%d dbname=judge user=judge connect_timeout=5", port);
	strbuf_release(&run);
}

static int ping(const char *dir, int port, const char *dbname)
{
	struct strbuf url = STRBUF_INIT;
	struct strbuf run = STRBUF_INIT;
	strbuf_addf(&run, "%s/run", dir);
	strbuf_addstr(&url, "host=");
	add_quoted(&url, run.buf);
	strbuf_addf(&url, " port=%d dbname=%s user=judge connect_timeout=3", port, dbname);
	PGPing p = PQping(url.buf);
	strbuf_release(&url);
	strbuf_release(&run);
	return p;
}

bool pgembed_running(const char *dir, int port)
{
	return ping(dir, port, "postgres") == PQPING_OK;
}

/* The OS user owning the cluster: `judge` (created if missing) when we are root. */
static int cluster_owner(uid_t *uid, gid_t *gid, char *err, size_t errlen)
{
	if (geteuid() != 0) {
		*uid = geteuid();
		*gid = getegid();
		return 0;
	}
	struct passwd *pw = getpwnam(EMBED_USER);
	if (!pw) {
		log_info("creating system user '%s' for the embedded database", EMBED_USER);
		pid_t pid = fork();
		if (pid == 0) {
			execlp("useradd", "useradd", "--system", "--user-group", "--no-create-home",
			       "--home-dir", "/nonexistent", "--shell", "/usr/sbin/nologin",
			       EMBED_USER, (char *)NULL);
			_exit(127);
		}
		int st = 0;
		if (pid < 0 || waitpid(pid, &st, 0) < 0) {
			snprintf(err, errlen, "cannot run useradd: %s", strerror(errno));
			return -1;
		}
		pw = getpwnam(EMBED_USER);
		if (!pw) {
			/* another process may have created it at the same time (exit 9) */
			snprintf(err, errlen, "cannot create system user '%s' (useradd status %d)",
				 EMBED_USER, WIFEXITED(st) ? WEXITSTATUS(st) : -1);
			return -1;
		}
	}
	*uid = pw->pw_uid;
	*gid = pw->pw_gid;
	return 0;
}

/* Runs argv as the cluster owner, output to logfile (or inherited when NULL).
 * Returns the exit status, or -1. */
static int run_as(const struct pgembed *h, char *const argv[], const char *logfile)
{
	pid_t pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		if (geteuid() == 0) {
			if (setgroups(0, NULL) < 0 || setgid(h->gid) < 0 || setuid(h->uid) < 0)
				_exit(126);
		}
		/* opened as the owner, so pg_ctl can append to it later */
		if (logfile) {
			int fd = open(logfile, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
			if (fd >= 0) {
				dup2(fd, 1);
				dup2(fd, 2);
			}
		}
		int nul = open("/dev/null", O_RDONLY);
		if (nul >= 0)
			dup2(nul, 0);
		if (chdir(h->dir) < 0)
			_exit(126);
		setenv("LC_ALL", "C.UTF-8", 1);
		unsetenv("PGDATA");
		unsetenv("PGHOST");
		unsetenv("PGPORT");
		execv(argv[0], argv);
		_exit(127);
	}
	int st;
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static int make_dir(const struct pgembed *h, const char *path, mode_t mode, char *err,
		    size_t errlen)
{
	if (mkdir(path, mode) < 0 && errno != EEXIST) {
		snprintf(err, errlen, "cannot create '%s': %s", path, strerror(errno));
		return -1;
	}
	if (geteuid() == 0 && chown(path, h->uid, h->gid) < 0) {
		snprintf(err, errlen, "cannot chown '%s': %s", path, strerror(errno));
		return -1;
	}
	if (chmod(path, mode) < 0) {
		snprintf(err, errlen, "cannot chmod '%s': %s", path, strerror(errno));
		return -1;
	}
	return 0;
}

static int write_file(const char *path, const char *text, uid_t uid, gid_t gid)
{
	FILE *f = fopen(path, "w");
	if (!f)
		return -1;
	fputs(text, f);
	if (fclose(f) != 0)
		return -1;
	if (geteuid() == 0 && chown(path, uid, gid) < 0)
		return -1;
	return 0;
}

/* Authentication: peer over the socket only, mapped to the database user judge. */
static int write_auth(const struct pgembed *h, const char *data, char *err, size_t errlen)
{
	struct strbuf path = STRBUF_INIT, text = STRBUF_INIT;
	int ret = -1;
	strbuf_addf(&path, "%s/pg_hba.conf", data);
	strbuf_addstr(&text, "# written by judge (pgembed.c): socket only, peer auth\n"
			     "local all all peer map=judge\n");
	if (write_file(path.buf, text.buf, h->uid, h->gid) < 0)
		goto fail;
	strbuf_reset(&path);
	strbuf_reset(&text);
	strbuf_addf(&path, "%s/pg_ident.conf", data);
	strbuf_addstr(&text,
		      "# written by judge (pgembed.c)\njudge root judge\njudge judge judge\n");
	struct passwd *pw = getpwuid(h->uid);
	if (pw && strcmp(pw->pw_name, "root") && strcmp(pw->pw_name, "judge"))
		strbuf_addf(&text, "judge %s judge\n", pw->pw_name);
	if (write_file(path.buf, text.buf, h->uid, h->gid) < 0)
		goto fail;
	ret = 0;
	goto out;
fail:
	snprintf(err, errlen, "cannot write '%s': %s", path.buf, strerror(errno));
out:
	strbuf_release(&path);
	strbuf_release(&text);
	return ret;
}

static int init_cluster(const struct pgembed *h, const char *data, const char *logfile, char *err,
			size_t errlen)
{
	struct strbuf initdb = STRBUF_INIT, conf = STRBUF_INIT;
	int ret = -1;
	strbuf_addf(&initdb, "%s/initdb", bindir());
	char *argv[] = {initdb.buf, "-D",	(char *)data, "-U",	     "judge", "-E",
			"UTF8",	    "--locale", "C.UTF-8",    "--auth=peer", NULL};
	log_info("initialising the embedded database in %s", data);
	int rc = run_as(h, argv, logfile);
	if (rc != 0) {
		snprintf(err, errlen, "initdb failed (status %d), see %s", rc, logfile);
		goto out;
	}
	if (write_auth(h, data, err, errlen) < 0)
		goto out;
	strbuf_addf(&conf, "%s/postgresql.conf", data);
	FILE *f = fopen(conf.buf, "a");
	if (!f || fputs("\n# judge: settings that depend on the folder\ninclude_if_exists = "
			"'judge.conf'\n",
			f) < 0) {
		if (f)
			fclose(f);
		snprintf(err, errlen, "cannot append to '%s'", conf.buf);
		goto out;
	}
	fclose(f);
	ret = 0;
out:
	strbuf_release(&initdb);
	strbuf_release(&conf);
	return ret;
}

/* Creates the database judge when missing (also after a crash between
 * initdb and this step). */
static int create_db(const struct pgembed *h, char *err, size_t errlen)
{
	struct strbuf url = STRBUF_INIT;
	strbuf_addf(&url, "host='%s/run' port=%d dbname=postgres user=judge", h->dir, h->port);
	PGconn *c = PQconnectdb(url.buf);
	strbuf_release(&url);
	int ret = -1;
	if (PQstatus(c) != CONNECTION_OK) {
		snprintf(err, errlen, "cannot connect to the embedded database: %s",
			 PQerrorMessage(c));
		goto out;
	}
	PGresult *r = PQexec(c, "SELECT 1 FROM pg_database WHERE datname = 'judge'");
	int have = PQresultStatus(r) == PGRES_TUPLES_OK && PQntuples(r) == 1;
	PQclear(r);
	if (!have) {
		r = PQexec(c, "CREATE DATABASE judge");
		/* 42P04: created by a concurrent start */
		const char *st = PQresultErrorField(r, PG_DIAG_SQLSTATE);
		if (PQresultStatus(r) != PGRES_COMMAND_OK && !(st && !strcmp(st, "42P04"))) {
			snprintf(err, errlen, "cannot create database judge: %s",
				 PQresultErrorMessage(r));
			PQclear(r);
			goto out;
		}
		PQclear(r);
	}
	ret = 0;
out:
	PQfinish(c);
	if (err[0])
		err[strcspn(err, "\n")] = 0;
	return ret;
}

int pgembed_start(const char *dir, int port, struct pgembed **out, char *err, size_t errlen)
{
	int ret = -1;
	struct strbuf data = STRBUF_INIT, run = STRBUF_INIT, logf = STRBUF_INIT,
		      pgctl = STRBUF_INIT, conf = STRBUF_INIT, conftext = STRBUF_INIT,
		      probe = STRBUF_INIT;
	struct pgembed *h = xcalloc(1, sizeof *h);
	*out = NULL;
	if (err && errlen)
		err[0] = 0;
	h->dir = xstrdup(dir);
	h->port = port;
	if (cluster_owner(&h->uid, &h->gid, err, errlen) < 0)
		goto out;
	strbuf_addf(&data, "%s/data", dir);
	strbuf_addf(&run, "%s/run", dir);
	strbuf_addf(&logf, "%s/postgres.log", dir);
	if (make_dir(h, dir, 0755, err, errlen) < 0 || make_dir(h, run.buf, 0755, err, errlen) < 0)
		goto out;
	if (pgembed_running(dir, port)) {
		if (create_db(h, err, errlen) < 0)
			goto out;
		ret = 0; /* someone else runs it: use it, leave it to them */
		goto out;
	}
	/* the owner must reach DIR through its parents (mktemp -d makes 0700) */
	strbuf_addf(&probe, "/usr/bin/test");
	char *probe_argv[] = {probe.buf, "-w", (char *)dir, NULL};
	if (run_as(h, probe_argv, NULL) != 0) {
		snprintf(err, errlen,
			 "the database user cannot write to '%s': make its parent folders "
			 "searchable (chmod o+x)",
			 dir);
		goto out;
	}
	struct stat st;
	strbuf_addstr(&conf, data.buf);
	strbuf_addstr(&conf, "/PG_VERSION");
	if (stat(conf.buf, &st) < 0) {
		if (make_dir(h, data.buf, 0700, err, errlen) < 0)
			goto out;
		if (init_cluster(h, data.buf, logf.buf, err, errlen) < 0)
			goto out;
	}
	strbuf_reset(&conf);
	strbuf_addf(&conf, "%s/judge.conf", data.buf);
	strbuf_addf(&conftext,
		    "# written by judge at each start (pgembed.c)\n"
		    "listen_addresses = ''\n"
		    "unix_socket_directories = '%s'\n"
		    "port = %d\n"
		    "max_connections = 300\n"
		    "logging_collector = off\n",
		    run.buf, port);
	if (write_file(conf.buf, conftext.buf, h->uid, h->gid) < 0) {
		snprintf(err, errlen, "cannot write '%s': %s", conf.buf, strerror(errno));
		goto out;
	}
	strbuf_addf(&pgctl, "%s/pg_ctl", bindir());
	char *argv[] = {pgctl.buf, "-D", data.buf, "-l", logf.buf, "-w", "-t", "60", "start", NULL};
	int rc = run_as(h, argv, logf.buf); /* pg_ctl's chatter too: stdout is the user's */
	if (rc != 0) {
		/* lost a race with a concurrent start? then it runs now */
		if (pgembed_running(dir, port)) {
			ret = create_db(h, err, errlen);
			goto out;
		}
		snprintf(err, errlen, "pg_ctl start failed (status %d), see %s", rc, logf.buf);
		goto out;
	}
	h->owned = true;
	log_info("embedded database started in %s", dir);
	if (create_db(h, err, errlen) < 0)
		goto out;
	*out = h;
	h = NULL;
	ret = 0;
out:
	if (h && h->owned) {
		pgembed_stop(h);
		h = NULL;
	}
	if (h) {
		free(h->dir);
		free(h);
	}
	strbuf_release(&data);
	strbuf_release(&run);
	strbuf_release(&logf);
	strbuf_release(&pgctl);
	strbuf_release(&conf);
	strbuf_release(&conftext);
	strbuf_release(&probe);
	return ret;
}

static int pg_ctl(struct pgembed *h, const char *action)
{
	struct strbuf pgctl = STRBUF_INIT, data = STRBUF_INIT, logf = STRBUF_INIT;
	strbuf_addf(&pgctl, "%s/pg_ctl", bindir());
	strbuf_addf(&data, "%s/data", h->dir);
	strbuf_addf(&logf, "%s/postgres.log", h->dir);
	char *argv[] = {pgctl.buf, "-D", data.buf, "-l", logf.buf,	 "-m",
			"fast",	   "-w", "-t",	   "60", (char *)action, NULL};
	int rc = run_as(h, argv, logf.buf);
	strbuf_release(&pgctl);
	strbuf_release(&data);
	strbuf_release(&logf);
	return rc;
}

void pgembed_stop(struct pgembed *h)
{
	if (!h)
		return;
	if (h->owned) {
		int rc = pg_ctl(h, "stop");
		if (rc != 0)
			log_warn("pg_ctl stop of %s failed (status %d)", h->dir, rc);
		else
			log_info("embedded database stopped");
	}
	free(h->dir);
	free(h);
}

void pgembed_detach(struct pgembed *h)
{
	if (!h)
		return;
	free(h->dir);
	free(h);
}

int pgembed_restart(struct pgembed *h, char *err, size_t errlen)
{
	int rc = pg_ctl(h, "restart");
	if (rc != 0) {
		snprintf(err, errlen, "pg_ctl restart failed (status %d)", rc);
		return -1;
	}
	return 0;
}
