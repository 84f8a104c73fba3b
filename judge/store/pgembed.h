/* pgembed: the embedded default database, a private PostgreSQL cluster.
 *
 * Used when database_url is empty. The cluster lives under DIR = state_dir/pg:
 * DIR/data (initdb's data folder, mode 0700) and DIR/run (the unix socket; no
 * TCP listener). It is created with the machine's initdb and run with pg_ctl
 * (PGEMBED_BINDIR, or the folder named by $JUDGE_PG_BINDIR). PostgreSQL refuses
 * to run as root, so as root the cluster belongs to the system user `judge`
 * (created with useradd when missing); otherwise to the calling user. Local
 * connections use peer authentication mapped to the database user `judge`,
 * accepted for the OS users root, judge and the cluster's owner.
 * Connection string: "host=DIR/run port=PORT dbname=judge user=judge".
 */
#pragma once
#include <stdbool.h>
#include <stddef.h>

#include "common/strbuf.h"

#define PGEMBED_BINDIR "/usr/lib/postgresql/15/bin"
#define PGEMBED_PORT   5432

struct pgembed;

/* Appends the connection string of the cluster under dir to url (whether or
 * not it exists or runs). */
void pgembed_url(const char *dir, int port, struct strbuf *url);
/* True when a server is accepting connections on the cluster under dir. */
bool pgembed_running(const char *dir, int port);
/* Initialises the cluster under dir when it does not exist yet (with the
 * database `judge`) and starts it when it is not running, waiting until it
 * accepts connections. *out (NULL when it was already running, so this
 * process must not stop it) is stopped and freed by pgembed_stop().
 * Returns 0 or -1 with a message in err. */
int pgembed_start(const char *dir, int port, struct pgembed **out, char *err, size_t errlen);
/* Stops the cluster if this handle started it (fast shutdown), frees h.
 * NULL is fine. */
void pgembed_stop(struct pgembed *h);
/* Frees h without stopping the cluster. NULL is fine. */
void pgembed_detach(struct pgembed *h);
/* Restarts the server of h (pg_ctl restart -m fast), for fault tests.
 * Returns 0 or -1 with err. */
int pgembed_restart(struct pgembed *h, char *err, size_t errlen);
