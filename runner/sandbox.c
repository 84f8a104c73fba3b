/* sandbox: the backend-independent layer — set-up, reclaim of dead owners, boxes, dispatch. */
#define _GNU_SOURCE
#include "runner/sandbox.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "common/clock.h"
#include "common/log.h"
#include "common/xalloc.h"
#include "runner/backend.h"
#include "runner/cg.h"
#include "runner/owner.h"

/* Every backend, indexed by enum sandbox_backend, in the order "auto" prefers
 * them. sandbox.c calls backends only through this table. */
static const struct sandbox_ops *const backend_ops[SANDBOX_BACKENDS] = {
    [SANDBOX_GVISOR] = &gvisor_ops,
    [SANDBOX_NATIVE] = &native_ops,
};

static struct sandbox_options options;
static bool inited; /* options holds sandbox_global_init's copy */
static atomic_ulong serial;
static bool ready[SANDBOX_BACKENDS]; /* global_init succeeded */
static int tool_backend = -1;	     /* tool_sandbox's backend, when it is ready */
static atomic_bool aborting;	     /* sandbox_global_abort: nothing starts any more */

/* Functions sandbox_global_shutdown calls first, last registered first. */
#define MAX_SHUTDOWN_HOOKS 8
static void (*shutdown_hooks[MAX_SHUTDOWN_HOOKS])(void);
static int nshutdown_hooks;
static pthread_mutex_t hooks_lock = PTHREAD_MUTEX_INITIALIZER;

const struct sandbox_options *sandbox_options(void)
{
	return inited ? &options : NULL;
}

int sandbox_fail(struct run_result *res, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(res->message, sizeof res->message, fmt, ap);
	va_end(ap);
	res->status = RUN_INTERNAL_ERROR;
	return 0;
}

bool sandbox_aborting(void)
{
	return atomic_load(&aborting);
}

static int mkdir_p(const char *path, mode_t mode)
{
	char buf[PATH_MAX];
	if (snprintf(buf, sizeof buf, "%s", path) >= (int)sizeof buf)
		return -ENAMETOOLONG;
	for (char *s = strchr(buf + 1, '/'); s; s = strchr(s + 1, '/')) {
		*s = 0;
		if (mkdir(buf, 0755) < 0 && errno != EEXIST)
			return -errno;
		*s = '/';
	}
	if (mkdir(buf, mode) < 0 && errno != EEXIST)
		return -errno;
	return 0;
}

/* The backend named s: 0 with *out, or -1. */
static int backend_index(const char *s, enum sandbox_backend *out)
{
	for (int b = 0; b < SANDBOX_BACKENDS; b++) {
		if (!strcmp(s, backend_ops[b]->name)) {
			*out = (enum sandbox_backend)b;
			return 0;
		}
	}
	return -1;
}

/* "gvisor or native": the backends' names, for messages. */
static const char *backend_names(void)
{
	static char buf[128];
	if (!buf[0])
		for (int b = 0; b < SANDBOX_BACKENDS; b++)
			snprintf(buf + strlen(buf), sizeof buf - strlen(buf), "%s%s",
				 b == 0			     ? ""
				 : b == SANDBOX_BACKENDS - 1 ? " or "
							     : ", ",
				 backend_ops[b]->name);
	return buf;
}

/* The backend that honours a run's network namespace and box_subdir (package
 * installs), or -1. */
static int netns_backend(void)
{
	for (int b = 0; b < SANDBOX_BACKENDS; b++)
		if (backend_ops[b]->joins_netns)
			return b;
	return -1;
}

/* Whether global_init starts backend b: every one for "auto", else the one
 * named, and always the one that runs package installs (joins_netns). */
static bool wanted(const struct sandbox_options *o, int b)
{
	return !strcmp(o->sandbox, "auto") || !strcmp(o->sandbox, backend_ops[b]->name) ||
	       backend_ops[b]->joins_netns;
}

/* Checks what no backend can work without. Returns 0, or -1 with err. */
static int check_options(const struct sandbox_options *o, char *err, size_t errlen)
{
	if (o->box_root[0] != '/') {
		snprintf(err, errlen, "box_root must be an absolute path, not '%s'", o->box_root);
		return -1;
	}
	enum sandbox_backend b;
	if (strcmp(o->sandbox, "auto") && backend_index(o->sandbox, &b) < 0) {
		snprintf(err, errlen, "sandbox must be auto or %s, not '%s'", backend_names(),
			 o->sandbox);
		return -1;
	}
	if (backend_index(o->tool_sandbox, &b) < 0) {
		snprintf(err, errlen, "tool_sandbox must be %s, not '%s'", backend_names(),
			 o->tool_sandbox);
		return -1;
	}
	if (strcmp(o->gvisor_platform, "ptrace") && strcmp(o->gvisor_platform, "systrap") &&
	    strcmp(o->gvisor_platform, "kvm")) {
		snprintf(err, errlen, "gvisor_platform must be ptrace, systrap or kvm, not '%s'",
			 o->gvisor_platform);
		return -1;
	}
	if (!o->cgroup_parent[0] || strchr(o->cgroup_parent, '/') || o->cgroup_parent[0] == '.') {
		snprintf(err, errlen, "cgroup_parent must be a plain name, not '%s'",
			 o->cgroup_parent);
		return -1;
	}
	if (o->box_uid <= 0 || o->gvisor_pool < 0 || o->gvisor_memory_bytes <= 0 ||
	    o->gvisor_tmp_bytes <= 0 ||
	    (o->gvisor_reuse && (o->gvisor_reuse_runs <= 0 || o->gvisor_reuse_s <= 0))) {
		snprintf(err, errlen, "incomplete sandbox options");
		return -1;
	}
	return 0;
}

int sandbox_global_init(const struct sandbox_options *opts, char *err, size_t errlen)
{
	if (check_options(opts, err, errlen) < 0)
		return -1;
	/* a copy: the backends read it for as long as the process runs */
	options = *opts;
	inited = true;
	const struct sandbox_options *o = &options;
	int rc = mkdir_p(o->box_root, 0755);
	if (rc < 0) {
		snprintf(err, errlen, "cannot create box_root '%s': %s", o->box_root,
			 strerror(-rc));
		return -1;
	}
	/* boxes must stay reachable for the sandbox uids, never writable by them */
	chmod(o->box_root, 0755);

	/* everything this process puts on the host is found from its owner folder;
	 * what dead ones left goes first (owner.h) */
	if (owner_open(o->box_root, err, errlen) < 0)
		return -1;
	atomic_store(&aborting, false);
	owner_reclaim_dead(o->box_root);

	char why[SANDBOX_BACKENDS][512];
	bool any = false;
	for (int b = 0; b < SANDBOX_BACKENDS; b++) {
		ready[b] = false;
		snprintf(why[b], sizeof why[b], "%s backend not started (sandbox = %.*s)",
			 backend_ops[b]->name, (int)sizeof o->sandbox, o->sandbox);
		if (!wanted(o, b))
			continue;
		ready[b] = backend_ops[b]->global_init(o, why[b], sizeof why[b]) == 0;
		if (!ready[b])
			log_warn("sandbox: %s backend unavailable: %s", backend_ops[b]->name,
				 why[b]);
		any = any || ready[b];
	}
	enum sandbox_backend tb;
	tool_backend = backend_index(o->tool_sandbox, &tb) == 0 && ready[tb] ? (int)tb : -1;

	enum sandbox_backend named;
	if (backend_index(o->sandbox, &named) == 0 && !ready[named]) {
		snprintf(err, errlen, "%s sandbox: %s", backend_ops[named]->name, why[named]);
		return -1;
	}
	if (!any) {
		struct strbuf msg = STRBUF_INIT;
		strbuf_addstr(&msg, "no sandbox works here");
		for (int b = 0; b < SANDBOX_BACKENDS; b++)
			strbuf_addf(&msg, "%s %s: %s", b ? ";" : ":", backend_ops[b]->name, why[b]);
		snprintf(err, errlen, "%s", msg.buf);
		strbuf_release(&msg);
		return -1;
	}
	return 0;
}

void sandbox_on_shutdown(void (*fn)(void))
{
	pthread_mutex_lock(&hooks_lock);
	bool known = false;
	for (int i = 0; i < nshutdown_hooks; i++)
		known = known || shutdown_hooks[i] == fn;
	if (!known && nshutdown_hooks < MAX_SHUTDOWN_HOOKS)
		shutdown_hooks[nshutdown_hooks++] = fn;
	pthread_mutex_unlock(&hooks_lock);
}

void sandbox_global_shutdown(void)
{
	/* what sits above the backends (prestarted sessions) stops first */
	pthread_mutex_lock(&hooks_lock);
	int n = nshutdown_hooks;
	void (*hooks[MAX_SHUTDOWN_HOOKS])(void);
	memcpy(hooks, shutdown_hooks, sizeof hooks);
	pthread_mutex_unlock(&hooks_lock);
	while (n > 0)
		hooks[--n]();
	for (int b = 0; b < SANDBOX_BACKENDS; b++) {
		backend_ops[b]->global_shutdown();
		ready[b] = false;
	}
	owner_close();
}

void sandbox_global_abort(void)
{
	atomic_store(&aborting, true);
	struct owner_counts c = {0};
	int64_t t0 = clock_mono_ms();
	owner_reclaim_self(&c);
	/* what a thread was making while the first pass ran (a box mount, a
	 * cgroup, a runsc start) */
	clock_sleep_ms(100);
	owner_reclaim_self(&c);
	log_info("sandbox: stopped at once: %d cgroups, %d mounts and %d runsc processes removed "
		 "in %lld ms",
		 c.cgroups, c.mounts, c.processes, (long long)(clock_mono_ms() - t0));
}

int sandbox_reclaim_dead(const char *box_root)
{
	return owner_reclaim_dead(box_root);
}

int sandbox_backend_parse(const char *s, enum sandbox_backend *out)
{
	if (!s)
		return -1;
	if (backend_index(s, out) == 0)
		return 0;
	if (strcmp(s, "auto"))
		return -1;
	/* the first that works, in the table's order of preference; else the last */
	char why[256];
	int b = 0;
	while (b < SANDBOX_BACKENDS - 1 && !backend_ops[b]->works(why, sizeof why))
		b++;
	*out = (enum sandbox_backend)b;
	return 0;
}

const char *sandbox_backend_name(enum sandbox_backend b)
{
	return (unsigned)b < SANDBOX_BACKENDS ? backend_ops[b]->name : "unknown";
}

bool sandbox_backend_works(enum sandbox_backend b, char *why, size_t whylen)
{
	if ((unsigned)b >= SANDBOX_BACKENDS) {
		snprintf(why, whylen, "no such backend");
		return false;
	}
	return backend_ops[b]->works(why, whylen);
}

const char *run_status_name(enum run_status s)
{
	switch (s) {
	case RUN_OK:
		return "ok";
	case RUN_RUNTIME_ERROR:
		return "runtime_error";
	case RUN_TIMEOUT:
		return "timeout";
	case RUN_MEMORY_LIMIT:
		return "memory_limit";
	case RUN_OUTPUT_LIMIT:
		return "output_limit";
	case RUN_INTERNAL_ERROR:
		return "internal_error";
	}
	return "internal_error";
}

int sandbox_open(enum sandbox_backend backend, int slot, long box_bytes, struct sandbox **out,
		 char *err, size_t errlen)
{
	*out = NULL;
	if (!inited || !owner_dir()) {
		snprintf(err, errlen, "sandbox_global_init was not called");
		return -EINVAL;
	}
	if (sandbox_aborting()) {
		snprintf(err, errlen, "the sandbox is stopping");
		return -ECANCELED;
	}
	if (slot < 0 || slot > 65535 || box_bytes <= 0) {
		snprintf(err, errlen, "bad sandbox slot %d or size %ld", slot, box_bytes);
		return -EINVAL;
	}
	struct sandbox *sb = xcalloc(1, sizeof *sb);
	sb->backend = backend;
	sb->slot = slot;
	sb->serial = atomic_fetch_add(&serial, 1);
	sb->host_uid = (uid_t)(options.box_uid + slot);
	sb->host_gid = (gid_t)(options.box_uid + slot);
	sb->box_bytes = box_bytes;
	sb->box_fd = -1;
	int rc;
	if (snprintf(sb->box_path, sizeof sb->box_path, "%s/box-%lu", owner_dir(), sb->serial) >=
	    (int)sizeof sb->box_path) {
		rc = -ENAMETOOLONG;
		snprintf(err, errlen, "box path too long");
		goto fail;
	}
	if (mkdir(sb->box_path, 0700) < 0) {
		rc = -errno;
		snprintf(err, errlen, "cannot create box '%s': %s", sb->box_path, strerror(errno));
		goto fail;
	}
	long inodes = box_bytes / 4096;
	if (inodes < 1024)
		inodes = 1024;
	if (inodes > 65536)
		inodes = 65536;
	char opts[160];
	/* 0700: only the box's own uid (its slot's, unique on the machine) and
	 * root enter it; another local user reads nothing of a run or session */
	snprintf(opts, sizeof opts, "size=%ld,nr_inodes=%ld,mode=0700,uid=%u,gid=%u", box_bytes,
		 inodes, (unsigned)sb->host_uid, (unsigned)sb->host_gid);
	if (mount("judge-box", sb->box_path, "tmpfs", MS_NOSUID | MS_NODEV, opts) < 0) {
		rc = -errno;
		snprintf(err, errlen, "cannot mount the box at '%s': %s", sb->box_path,
			 strerror(errno));
		rmdir(sb->box_path);
		goto fail;
	}
	sb->box_fd = open(sb->box_path, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (sb->box_fd < 0) {
		rc = -errno;
		snprintf(err, errlen, "cannot open the box '%s': %s", sb->box_path,
			 strerror(errno));
		umount2(sb->box_path, MNT_DETACH);
		rmdir(sb->box_path);
		goto fail;
	}
	*out = sb;
	return 0;
fail:
	free(sb);
	return rc;
}

/* Checks a box-relative name: not empty, not absolute, no "." or ".." part,
 * no empty part. Returns 0 or -EINVAL. */
static int check_name(const char *name)
{
	if (!name || !name[0] || name[0] == '/' || strlen(name) >= PATH_MAX)
		return -EINVAL;
	const char *s = name;
	while (*s) {
		const char *e = strchrnul(s, '/');
		size_t n = (size_t)(e - s);
		if (n == 0 || (n == 1 && s[0] == '.') || (n == 2 && s[0] == '.' && s[1] == '.'))
			return -EINVAL;
		s = *e ? e + 1 : e;
		if (*e && !*s)
			return -EINVAL; /* trailing '/' */
	}
	return 0;
}

/* Opens the folder holding the last part of name, walking each part with
 * O_NOFOLLOW (creating folders when create). Returns an fd and sets *last. */
static int open_parent(struct sandbox *sb, const char *name, bool create, const char **last)
{
	char buf[PATH_MAX];
	snprintf(buf, sizeof buf, "%s", name);
	int dfd = fcntl(sb->box_fd, F_DUPFD_CLOEXEC, 0);
	if (dfd < 0)
		return -errno;
	char *s = buf;
	for (char *slash; (slash = strchr(s, '/')); s = slash + 1) {
		*slash = 0;
		if (create && mkdirat(dfd, s, 0755) == 0 &&
		    fchownat(dfd, s, sb->host_uid, sb->host_gid, AT_SYMLINK_NOFOLLOW) < 0) {
			int e = errno;
			close(dfd);
			return -e;
		}
		int nfd = openat(dfd, s, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		int e = errno;
		close(dfd);
		if (nfd < 0)
			return -e;
		dfd = nfd;
	}
	*last = name + (s - buf);
	return dfd;
}

/* Opens the regular file name of the box with flags (O_RDONLY, or O_WRONLY |
 * O_CREAT), never following a link on the way (a link planted by a program is
 * refused with ELOOP) and never blocking on a planted FIFO. Returns the fd or -errno. */
static int open_box_file(struct sandbox *sb, const char *name, int flags)
{
	int rc = check_name(name);
	if (rc < 0 || !sb || sb->box_fd < 0)
		return -EINVAL;
	const char *last;
	int dfd = open_parent(sb, name, flags & O_CREAT, &last);
	if (dfd < 0)
		return dfd;
	int fd = openat(dfd, last, flags | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY, 0600);
	rc = fd < 0 ? -errno : 0;
	close(dfd);
	if (rc < 0)
		return rc;
	struct stat st;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return -EINVAL;
	}
	return fd;
}

int sandbox_set_reuse_key(struct sandbox *sb, const char *key)
{
	if (key && (!key[0] || strlen(key) > 63))
		return -EINVAL;
	free(sb->reuse_key);
	sb->reuse_key = key && options.gvisor_reuse ? xstrdup(key) : NULL;
	free(sb->tenant_key);
	sb->tenant_key = key ? xstrdup(key) : NULL;
	return 0;
}

int sandbox_write_file(struct sandbox *sb, const char *name, const void *data, size_t len, int mode)
{
	int rc = 0;
	sb->box_changes++;
	int fd = open_box_file(sb, name, O_WRONLY | O_CREAT);
	if (fd < 0)
		return fd;
	if (ftruncate(fd, 0) < 0 || fchown(fd, sb->host_uid, sb->host_gid) < 0 ||
	    fchmod(fd, (mode_t)mode & 07777 & ~(mode_t)(S_ISUID | S_ISGID)) < 0) {
		rc = -errno;
		goto out;
	}
	const char *p = data;
	while (len > 0) {
		ssize_t w = write(fd, p, len);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			rc = -errno;
			goto out;
		}
		p += w;
		len -= (size_t)w;
	}
out:
	close(fd);
	return rc;
}

int sandbox_read_file(struct sandbox *sb, const char *name, struct strbuf *out, size_t max)
{
	int rc = 0;
	int fd = open_box_file(sb, name, O_RDONLY);
	if (fd < 0)
		return fd;
	size_t start = out->len;
	for (;;) {
		strbuf_grow(out, 65536);
		size_t room = max - (out->len - start) + 1;
		if (room > 65536)
			room = 65536;
		ssize_t n = read(fd, out->buf + out->len, room);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			rc = -errno;
			break;
		}
		if (n == 0)
			break;
		out->len += (size_t)n;
		if (out->len - start > max) {
			out->len = start + max;
			rc = -EFBIG;
			break;
		}
	}
	out->buf[out->len] = 0;
	close(fd);
	return rc;
}

const char *sandbox_box_path(const struct sandbox *sb)
{
	return sb->box_path;
}

enum sandbox_backend sandbox_backend_of(const struct sandbox *sb)
{
	return sb->backend;
}

long sandbox_box_bytes(const struct sandbox *sb)
{
	return sb->box_bytes;
}

long sandbox_box_used_kb(const struct sandbox *sb)
{
	struct statvfs st;
	if (statvfs(sb->box_path, &st) < 0)
		return -1;
	return (long)((st.f_blocks - st.f_bfree) * (unsigned long long)st.f_frsize / 1024);
}

bool sandbox_is_fresh(const struct sandbox *sb)
{
	if (sb->runs || sb->box_changes)
		return false;
	for (int b = 0; b < SANDBOX_BACKENDS; b++)
		if (sb->state[b])
			return false;
	return true;
}

void sandbox_swap(struct sandbox *a, struct sandbox *b)
{
	struct sandbox tmp = *a;
	*a = *b;
	*b = tmp;
}

enum sandbox_backend sandbox_tool_backend(enum sandbox_backend b)
{
	/* the table runs from most to least isolated: tool_sandbox may make a
	 * workspace's tools run in a lighter backend, never in a heavier one */
	return tool_backend > (int)b ? (enum sandbox_backend)tool_backend : b;
}

void sandbox_prepare(enum sandbox_backend backend, const struct run_spec *spec)
{
	if ((unsigned)backend < SANDBOX_BACKENDS && backend_ops[backend]->prepare && spec &&
	    spec->argv && spec->argv[0])
		backend_ops[backend]->prepare(spec);
}

/* The name of the first limit of l that is not > 0, or NULL when all are: the
 * caller owns the policy, so a missing limit is its bug, not a default here. */
/* Clears res for a new run, keeping its buffers: internal_error until a
 * backend decides. */
static void reset_result(struct run_result *res)
{
	res->status = RUN_INTERNAL_ERROR;
	res->exit_code = res->signal = 0;
	res->cpu_ms = res->wall_ms = res->memory_kb = 0;
	res->out_truncated = res->err_truncated = false;
	res->message[0] = 0;
	res->sandbox_id[0] = 0;
	strbuf_reset(&res->out);
	strbuf_reset(&res->err);
}

static const char *incomplete_limit(const struct run_limits *l)
{
	const struct {
		const char *name;
		long v;
	} f[] = {
	    {"cpu_ms", l->cpu_ms},
	    {"wall_ms", l->wall_ms},
	    {"memory_kb", l->memory_kb},
	    {"processes", l->processes},
	    {"stdout_bytes", l->stdout_bytes},
	    {"stderr_bytes", l->stderr_bytes},
	    {"file_bytes", l->file_bytes},
	    {"open_files", l->open_files},
	    {"tmp_bytes", l->tmp_bytes},
	};
	for (size_t i = 0; i < sizeof f / sizeof f[0]; i++)
		if (f[i].v <= 0)
			return f[i].name;
	return NULL;
}

int sandbox_run(struct sandbox *sb, const struct run_spec *spec, struct run_result *res)
{
	if (!res)
		return -1;
	if (!sb || !spec || !spec->argv || !spec->argv[0] || spec->argv[0][0] != '/' ||
	    !spec->env || sb->box_fd < 0) {
		sandbox_fail(res, "invalid run specification");
		return -1;
	}
	reset_result(res);
	const char *missing = incomplete_limit(&spec->limits);
	if (missing)
		return sandbox_fail(res, "incomplete limits: %s", missing);
	enum sandbox_backend b =
	    spec->trusted_tool ? sandbox_tool_backend(sb->backend) : sb->backend;
	if (spec->net_ns_fd > 0 || spec->box_subdir)
		b = netns_backend(); /* only such a backend can honour them */
	if ((unsigned)b >= SANDBOX_BACKENDS)
		return sandbox_fail(res, "no such backend %d", (int)b);
	return backend_ops[b]->run(sb, spec, res);
}

void sandbox_close(struct sandbox *sb)
{
	if (!sb)
		return;
	for (int b = 0; b < SANDBOX_BACKENDS; b++)
		if (sb->state[b])
			backend_ops[b]->close(sb);
	if (sb->box_fd >= 0)
		close(sb->box_fd);
	/* unmount, never walk: the box may hold links towards host files (after
	 * sandbox_global_abort it is gone already) */
	if (umount2(sb->box_path, MNT_DETACH | UMOUNT_NOFOLLOW) < 0 && !sandbox_aborting())
		log_warn("sandbox: cannot unmount box '%s': %s", sb->box_path, strerror(errno));
	if (rmdir(sb->box_path) < 0 && !sandbox_aborting())
		log_warn("sandbox: cannot remove box '%s': %s", sb->box_path, strerror(errno));
	free(sb->reuse_key);
	free(sb->tenant_key);
	free(sb);
}

void run_result_init(struct run_result *res)
{
	memset(res, 0, sizeof(*res));
	strbuf_init(&res->out);
	strbuf_init(&res->err);
	res->status = RUN_INTERNAL_ERROR;
}

void run_result_release(struct run_result *res)
{
	strbuf_release(&res->out);
	strbuf_release(&res->err);
}

/* ---- live processes ---- */

int sandbox_start(struct sandbox *sb, const struct run_spec *spec, struct sandbox_proc **out,
		  char *err, size_t errlen)
{
	*out = NULL;
	if (!sb || !spec || !spec->argv || !spec->argv[0] || spec->argv[0][0] != '/' ||
	    !spec->env || sb->box_fd < 0 || (unsigned)sb->backend >= SANDBOX_BACKENDS) {
		snprintf(err, errlen, "invalid run specification");
		return -1;
	}
	const char *missing = incomplete_limit(&spec->limits);
	if (missing) {
		snprintf(err, errlen, "incomplete limits: %s", missing);
		return -1;
	}
	const struct sandbox_ops *ops = backend_ops[sb->backend];
	if (!ops->start) {
		snprintf(err, errlen, "the %s backend cannot start live processes", ops->name);
		return -1;
	}
	if (spec->restore_dir && !ops->proc_checkpoint) {
		snprintf(err, errlen, "the %s backend cannot restore a sandbox", ops->name);
		return -1;
	}
	if (spec->net_ns_fd > 0 && !ops->joins_netns && !ops->starts_in_netns) {
		/* never an empty namespace instead: the caller wants that one */
		snprintf(err, errlen, "the %s backend cannot join a network namespace", ops->name);
		return -1;
	}
	struct sandbox_proc *p = xcalloc(1, sizeof *p);
	p->sb = sb;
	p->backend = sb->backend;
	p->in_fd = p->out_fd = p->err_fd = -1;
	p->limits = spec->limits;
	p->t0_us = clock_mono_us();
	if (ops->start(sb, spec, p, err, errlen) < 0) {
		free(p);
		return -1;
	}
	*out = p;
	return 0;
}

void sandbox_proc_fds(const struct sandbox_proc *p, int *in_fd, int *out_fd, int *err_fd)
{
	if (in_fd)
		*in_fd = p->in_fd;
	if (out_fd)
		*out_fd = p->out_fd;
	if (err_fd)
		*err_fd = p->err_fd;
}

void sandbox_proc_rebind(struct sandbox_proc *p, struct sandbox *sb)
{
	p->sb = sb;
}

void sandbox_proc_close_stdin(struct sandbox_proc *p)
{
	if (p->in_fd >= 0)
		close(p->in_fd);
	p->in_fd = -1;
}

int sandbox_proc_signal(struct sandbox_proc *p, int sig)
{
	if (p->waited)
		return -ESRCH;
	return backend_ops[p->backend]->proc_signal(p, sig);
}

int sandbox_proc_usage(struct sandbox_proc *p, long *cpu_ms, long *memory_kb)
{
	long long us = 0;
	long kb = 0;
	int rc = backend_ops[p->backend]->proc_usage(p, &us, &kb);
	if (rc == 0) {
		if (cpu_ms)
			*cpu_ms = (long)(us / 1000);
		if (memory_kb)
			*memory_kb = kb;
	}
	return rc;
}

int sandbox_proc_checkpoint(struct sandbox_proc *p, const char *dir, char *err, size_t errlen)
{
	const struct sandbox_ops *ops = backend_ops[p->backend];
	if (!ops->proc_checkpoint) {
		snprintf(err, errlen, "the %s backend cannot checkpoint a sandbox", ops->name);
		return -1;
	}
	if (p->waited) {
		snprintf(err, errlen, "the sandbox has ended");
		return -1;
	}
	return ops->proc_checkpoint(p, dir, err, errlen);
}

int sandbox_proc_oom_kills(struct sandbox_proc *p, long *count)
{
	*count = 0;
	return backend_ops[p->backend]->proc_ooms(p, count);
}

int sandbox_proc_tasks(struct sandbox_proc *p, long *tasks, long *pids_refused, long *throttled_ms)
{
	struct cg *cg = backend_ops[p->backend]->proc_cg(p);
	long n = 0, refused = 0;
	long long thr = 0;
	if (!cg)
		return -ENOENT;
	int rc = cg_pids_current(cg, &n);
	if (rc < 0)
		return rc;
	cg_pids_limit_hits(cg, &refused);
	cg_cpu_throttled_us(cg, &thr); /* none without a CPU limit */
	if (tasks)
		*tasks = n;
	if (pids_refused)
		*pids_refused = refused;
	if (throttled_ms)
		*throttled_ms = (long)(thr / 1000);
	return 0;
}

int sandbox_proc_wait(struct sandbox_proc *p, long timeout_ms, struct run_result *res)
{
	if (p->waited)
		return -1;
	p->waited = true;
	reset_result(res);
	int64_t deadline = p->t0_us + p->limits.wall_ms * 1000LL;
	if (timeout_ms >= 0 && clock_mono_us() + timeout_ms * 1000LL < deadline)
		deadline = clock_mono_us() + timeout_ms * 1000LL;
	backend_ops[p->backend]->proc_wait(p, deadline, res);
	return 0;
}

void sandbox_proc_free(struct sandbox_proc *p)
{
	if (!p)
		return;
	backend_ops[p->backend]->proc_free(p);
	int *fds[] = {&p->in_fd, &p->out_fd, &p->err_fd};
	for (int i = 0; i < 3; i++)
		if (*fds[i] >= 0)
			close(*fds[i]);
	free(p);
}

int sandbox_helper_path(const char *name, const char *env_var, char *out, size_t len)
{
	const char *env = getenv(env_var);
	if (env && access(env, X_OK) == 0)
		return snprintf(out, len, "%s", env) < (int)len ? 0 : -1;
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n > 0) {
		exe[n] = 0;
		char *slash = strrchr(exe, '/');
		if (slash)
			*slash = 0;
		/* beside (installed), then bin/ of a build tree from bin/ or build/tests/ */
		static const char *const rel[] = {"", "../bin/", "../../bin/", "../../../bin/"};
		for (size_t i = 0; i < sizeof(rel) / sizeof(rel[0]); i++)
			if (snprintf(out, len, "%s/%s%s", exe, rel[i], name) < (int)len &&
			    access(out, X_OK) == 0)
				return 0;
	}
	snprintf(out, len, "bin/%s", name);
	return access(out, X_OK) == 0 ? 0 : -1;
}
