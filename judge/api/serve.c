/* serve: `judge serve` and serve_main(): listener, privilege drop, signals, the API. */
#define _GNU_SOURCE
#include "judge/api/serve.h"

#include <errno.h>
#include <grp.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "judge/api/api.h"
#include "judge/service/auth.h"
#include "judge/service/session/sessegress.h"
#include "judge/service/session/sessnet.h"
#include "common/config.h"
#include "judge/store/db.h"
#include "judge/api/http.h"
#include "common/log.h"
#include "judge/store/migrate.h"
#include "common/strbuf.h"

/* Drops root for serve_user (falling back to nobody when it does not exist).
 * Returns 0 or -1 with err. */
static int drop_privileges(const char *user, char *err, size_t errlen)
{
	if (geteuid() != 0)
		return 0;
	struct passwd *pw = getpwnam(user);
	if (!pw) {
		log_warn("serve: user '%s' does not exist; dropping to nobody", user);
		pw = getpwnam("nobody");
	}
	if (!pw) {
		snprintf(err, errlen, "cannot drop root: no user '%s' and no nobody", user);
		return -1;
	}
	if (pw->pw_uid == 0) {
		snprintf(err, errlen, "serve_user '%s' is root; refusing to serve as root", user);
		return -1;
	}
	uid_t uid = pw->pw_uid;
	gid_t gid = pw->pw_gid;
	/* a change of credentials clears the parent-death signal that `judge up`
	 * set: keep it, so serve does not outlive a killed `up` */
	int pdeath = 0;
	prctl(PR_GET_PDEATHSIG, &pdeath, 0, 0, 0);
	pid_t parent = getppid();
	if (setgroups(1, &gid) < 0 || setresgid(gid, gid, gid) < 0 ||
	    setresuid(uid, uid, uid) < 0) {
		snprintf(err, errlen, "cannot drop root for '%s': %s", user, strerror(errno));
		return -1;
	}
	/* must not be able to come back */
	if (setuid(0) == 0 || geteuid() == 0) {
		snprintf(err, errlen, "dropping root did not stick");
		return -1;
	}
	prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
	prctl(PR_SET_DUMPABLE, 1, 0, 0, 0);
	if (pdeath) {
		prctl(PR_SET_PDEATHSIG, pdeath, 0, 0, 0);
		if (getppid() != parent) /* the parent died while we changed user */
			raise(pdeath);
	}
	log_info("serve: running as %s (uid %u)", user, (unsigned)uid);
	return 0;
}

static void log_bound(int fd)
{
	struct sockaddr_storage ss;
	socklen_t sl = sizeof ss;
	char host[64] = "?";
	int port = 0;
	if (getsockname(fd, (struct sockaddr *)&ss, &sl) < 0)
		return;
	if (ss.ss_family == AF_INET) {
		struct sockaddr_in *a = (struct sockaddr_in *)&ss;
		inet_ntop(AF_INET, &a->sin_addr, host, sizeof host);
		port = ntohs(a->sin_port);
	} else if (ss.ss_family == AF_INET6) {
		struct sockaddr_in6 *a = (struct sockaddr_in6 *)&ss;
		inet_ntop(AF_INET6, &a->sin6_addr, host, sizeof host);
		port = ntohs(a->sin6_port);
	}
	log_info("serve: listening on http://%s:%d", host, port);
}

int serve_main(struct judge_config *cfg)
{
	int ret = 1, fd = -1;
	char err[512];
	struct strbuf url = STRBUF_INIT;
	struct db *db = NULL;
	struct api *api = NULL;
	sigset_t set;

	if (strcmp(cfg->auth, "on") && strcmp(cfg->auth, "off")) {
		log_error("serve: auth must be on or off, got '%s'", cfg->auth);
		goto out;
	}
	struct sessnet_policy cap;
	if (sessnet_cap_parse(cfg->egress, cfg->egress_allow, &cap, err, sizeof err) < 0 ||
	    sessegress_check_options(cfg->egress_hosts, cfg->egress_addr_allow, err, sizeof err) <
		0) {
		log_error("serve: %s", err);
		goto out;
	}
	if (!strcmp(cfg->auth, "off") && !auth_listen_is_loopback(cfg->listen)) {
		log_error("serve: auth = off is only allowed on a loopback listener, not '%s'",
			  cfg->listen);
		goto out;
	}
	if (!strcmp(cfg->auth, "off"))
		log_warn("serve: auth is off: anyone on this machine can submit code");
	if (db_config_url(cfg, false, &url, NULL, err, sizeof err) < 0) {
		log_error("serve: %s", err);
		goto out;
	}
	fd = http_listen(cfg->listen, err, sizeof err);
	if (fd < 0) {
		log_error("serve: %s", err);
		goto out;
	}
	if (drop_privileges(cfg->serve_user, err, sizeof err) < 0) {
		log_error("serve: %s", err);
		goto out;
	}
	/* a server on a schema it does not know would write rows a worker cannot read */
	if (db_open(&db, url.buf, 30000, err, sizeof err) < 0 ||
	    migrate_check(db, err, sizeof err) < 0) {
		log_error("serve: database: %s", err);
		goto out;
	}
	db_close(db);
	db = NULL;

	/* signals are taken by sigwait below; every thread started later inherits the mask */
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGHUP);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	signal(SIGPIPE, SIG_IGN);
	log_bound(fd);
	if (api_start(&api, cfg, url.buf, fd, err, sizeof err) < 0) {
		fd = -1; /* api_start owns it */
		log_error("serve: %s", err);
		goto out;
	}
	fd = -1;
	int sig = 0;
	while (sigwait(&set, &sig) == 0 && sig == SIGHUP)
		log_info("serve: SIGHUP ignored (restart to reload the configuration)");
	log_info("serve: %s: stopping", strsignal(sig));
	api_stop(api);
	api = NULL;
	ret = 0;
out:
	if (fd >= 0)
		close(fd);
	db_close(db);
	strbuf_release(&url);
	return ret;
}
