/* nsplan: the worker's side of a native run's plan — the root and the program,
 * built before clone and carried out by bin/ns_init (runner/native/init/ns_init.c) in the
 * new namespaces; see the "theory of operation" atop native.c.
 */
#define _GNU_SOURCE
#include "runner/native/nsplan.h"

#include <errno.h>
#include <linux/filter.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "runner/backend.h"

static const char *const step_names[] = {
    [S_FDS] = "setting up descriptors",
    [S_CGJOIN] = "joining the run's cgroup",
    [S_AMBIENT] = "keeping capabilities across exec",
    [S_INIT_EXEC] = "starting ns_init",
    [S_PLAN] = "reading the plan",
    [S_CGROUPNS] = "unsharing the cgroup namespace",
    [S_SETGROUPS] = "setgroups",
    [S_SETGID] = "setresgid",
    [S_KEEPCAPS] = "PR_SET_KEEPCAPS",
    [S_SETUID] = "setresuid",
    [S_CAPSET] = "capset",
    [S_PRIVATE] = "making mounts private",
    [S_ROOT] = "mounting the root tmpfs",
    [S_OP] = "building the root",
    [S_HOSTNAME] = "sethostname",
    [S_PIVOT] = "pivot_root",
    [S_UMOUNT_OLD] = "unmounting the old root",
    [S_RO_ROOT] = "making the root read-only",
    [S_FORK] = "forking the program",
    [S_SECUREBITS] = "PR_SET_SECUREBITS",
    [S_CAPBSET] = "dropping the bounding set",
    [S_NNP] = "PR_SET_NO_NEW_PRIVS",
    [S_RLIMIT] = "setrlimit",
    [S_CHDIR_BOX] = "chdir /box",
    [S_SECCOMP] = "installing the seccomp filter",
    [S_EXEC] = "execve",
    [S_SETNS] = "joining the run's namespaces from the zygote",
};

static const char *const op_names[] = {
    [OP_MKDIR] = "mkdir",     [OP_MKFILE] = "create", [OP_SYMLINK] = "symlink",
    [OP_BIND_RO] = "bind ro", [OP_BIND] = "bind",     [OP_TMPFS] = "mount tmpfs",
    [OP_PROC] = "mount proc", [OP_WRITE] = "write",   [OP_BOXDIR] = "bind box folder",
};

/* Copies len bytes of s into the plan's pool at an offset aligned to align;
 * returns the offset (NSINIT_NONE and p->overflow when full). */
static uint32_t pool_put(struct nsinit_plan *p, const void *s, size_t len, size_t align)
{
	size_t at = (p->used + align - 1) / align * align;
	if (at + len > sizeof p->pool) {
		p->overflow = true;
		return NSINIT_NONE;
	}
	memset(p->pool + p->used, 0, at - p->used);
	memcpy(p->pool + at, s, len);
	p->used = (uint32_t)(at + len);
	return (uint32_t)at;
}

static uint32_t pool_str(struct nsinit_plan *p, const char *s)
{
	return pool_put(p, s, strlen(s) + 1, 1);
}

/* The strings of a NULL-terminated list in a row; their count in *n. */
static uint32_t pool_list(struct nsinit_plan *p, const char *const *v, uint32_t *n)
{
	uint32_t first = p->used;
	*n = 0;
	for (; v && *v; v++, (*n)++)
		pool_str(p, *v);
	return first;
}

static void add_op(struct nsinit_plan *p, enum op_kind k, const char *a, const char *data)
{
	if (p->nops >= NSINIT_MAX_OPS) {
		p->overflow = true;
		return;
	}
	struct op *o = &p->ops[p->nops++];
	o->kind = k;
	o->a = pool_str(p, a[0] == '/' ? a + 1 : a);
	o->data = data ? pool_str(p, data) : NSINIT_NONE;
	o->len = data ? (uint32_t)strlen(data) : 0;
}

/* mkdir of every parent of rel (relative path), then of rel itself. */
static void add_mkdirs(struct nsinit_plan *p, const char *rel)
{
	char buf[PATH_MAX];
	snprintf(buf, sizeof buf, "%s", rel[0] == '/' ? rel + 1 : rel);
	for (char *s = strchr(buf, '/'); s; s = strchr(s + 1, '/')) {
		*s = 0;
		add_op(p, OP_MKDIR, buf, NULL);
		*s = '/';
	}
	add_op(p, OP_MKDIR, buf, NULL);
}

/* The host's top folders: a real folder is bound read-only, a symlink (usrmerge:
 * /bin -> usr/bin) is recreated as the same symlink. */
static const char *const top_dirs[] = {"/usr",	  "/lib", "/lib64", "/lib32",
				       "/libx32", "/bin", "/sbin"};

static void add_host_path(struct nsinit_plan *p, const char *path, bool must)
{
	struct stat st;
	if (lstat(path, &st) < 0) {
		if (must)
			p->overflow = true;
		return;
	}
	if (S_ISLNK(st.st_mode)) {
		char target[PATH_MAX];
		ssize_t n = readlink(path, target, sizeof target - 1);
		if (n <= 0)
			return;
		target[n] = 0;
		add_op(p, OP_SYMLINK, path, target);
	} else if (S_ISDIR(st.st_mode)) {
		add_mkdirs(p, path);
		add_op(p, OP_BIND_RO, path, path);
	} else if (S_ISREG(st.st_mode)) {
		add_op(p, OP_MKFILE, path, NULL);
		add_op(p, OP_BIND_RO, path, path);
	}
}

static const char etc_passwd[] = "root:x:0:0:root:/root:/usr/sbin/nologin\n"
				 "box:x:1000:1000:box:/box:/bin/sh\n"
				 "nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n";
static const char etc_group[] = "root:x:0:\nbox:x:1000:\nnogroup:x:65534:\n";
static const char etc_hosts[] = "127.0.0.1\tlocalhost box\n::1\tlocalhost\n";
static const char etc_nsswitch[] = "passwd: files\ngroup: files\nhosts: files\n";

/* True when path is one of the top folders or below one (already visible). */
static bool under_top(const char *path)
{
	for (size_t i = 0; i < sizeof top_dirs / sizeof top_dirs[0]; i++) {
		size_t n = strlen(top_dirs[i]);
		if (!strncmp(path, top_dirs[i], n) && (path[n] == '/' || !path[n]))
			return true;
	}
	return false;
}

static bool path_ok(const char *path)
{
	if (path[0] != '/' || !path[1] || strlen(path) >= 512)
		return false;
	for (const char *s = path; (s = strstr(s, "..")); s += 2)
		if ((s == path || s[-1] == '/') && (s[2] == '/' || !s[2]))
			return false;
	return true;
}

/* A box-relative folder: not empty, no leading '/', no empty, "." or ".." part. */
static bool subdir_ok(const char *sub)
{
	if (strlen(sub) >= 256)
		return false;
	for (const char *s = sub;;) {
		size_t n = strcspn(s, "/");
		if (!n || (n == 1 && s[0] == '.') || (n == 2 && s[0] == '.' && s[1] == '.'))
			return false;
		if (!s[n])
			return true;
		s += n + 1;
	}
}

/* True when path is dir or below it. */
static bool path_under(const char *path, const char *dir)
{
	size_t n = strlen(dir);
	return !strncmp(path, dir, n) && (path[n] == '/' || !path[n]);
}

/* Folders a language may not bind: the kernel's views, the host's secrets and
 * configuration as a whole (single entries of /etc are fine), and the boxes. */
static bool forbidden_ro_path(const char *path, const char *box_root)
{
	static const char *const under[] = {"/proc", "/sys", "/dev", "/root", "/home", "/run"};
	for (size_t i = 0; i < sizeof under / sizeof under[0]; i++)
		if (path_under(path, under[i]))
			return true;
	return !strcmp(path, "/etc") || path_under(path, box_root);
}

/* /box: the whole box (at SANDBOX_HOME too when home), or only its folder
 * sub (writable) on an empty /box. */
static int add_box(struct nsinit_plan *p, const struct sandbox *sb, const char *sub, bool home,
		   char *err, size_t errlen)
{
	char rel[PATH_MAX];
	add_op(p, OP_MKDIR, "box", NULL);
	if (!sub) {
		add_op(p, OP_BIND, "box", sb->box_path);
		if (home) {
			/* the same folder: a file written at either path is at both */
			add_mkdirs(p, SANDBOX_HOME);
			add_op(p, OP_BIND, SANDBOX_HOME + 1, sb->box_path);
		}
		return 0;
	}
	if (!subdir_ok(sub) || snprintf(rel, sizeof rel, "box/%s", sub) >= (int)sizeof rel) {
		snprintf(err, errlen, "bad box folder '%s'", sub);
		return -1;
	}
	add_mkdirs(p, rel);
	add_op(p, OP_BOXDIR, rel, sub);
	p->box_path = pool_str(p, sb->box_path);
	return 0;
}

int nsplan_build(struct nsinit_plan *p, const struct sandbox *sb, const struct run_spec *spec,
		 const struct nsplan_host *host, char *err, size_t errlen)
{
	const struct run_limits *l = &spec->limits;
	const char *box_root = host->box_root;
	char opts[160];

	p->version = NSINIT_VERSION;
	p->box_path = NSINIT_NONE;
	p->newroot = pool_str(p, host->newroot);
	p->last_cap = host->last_cap;
	p->filter_len = host->filter->len;
	p->filter =
	    pool_put(p, host->filter->insns, host->filter->len * sizeof(struct sock_filter), 8);
	if (!spec->argv || !spec->argv[0]) {
		snprintf(err, errlen, "no program to run");
		return -1;
	}

	for (size_t i = 0; i < sizeof top_dirs / sizeof top_dirs[0]; i++)
		add_host_path(p, top_dirs[i], false);

	add_op(p, OP_MKDIR, "etc", NULL);
	add_op(p, OP_WRITE, "etc/passwd", etc_passwd);
	add_op(p, OP_WRITE, "etc/group", etc_group);
	add_op(p, OP_WRITE, "etc/hosts", etc_hosts);
	add_op(p, OP_WRITE, "etc/nsswitch.conf", etc_nsswitch);
	add_op(p, OP_WRITE, "etc/hostname", "box\n");
	add_host_path(p, "/etc/ld.so.cache", false);
	add_host_path(p, "/etc/alternatives", false);

	for (const char *const *rp = spec->ro_paths; rp && *rp; rp++) {
		if (!path_ok(*rp)) {
			snprintf(err, errlen, "bad read-only path '%s'", *rp);
			return -1;
		}
		if (under_top(*rp))
			continue;
		struct stat st;
		if (stat(*rp, &st) < 0) {
			snprintf(err, errlen, "read-only path '%s': %s", *rp, strerror(errno));
			return -1;
		}
		if (forbidden_ro_path(*rp, box_root)) {
			snprintf(err, errlen, "read-only path '%s' is not allowed", *rp);
			return -1;
		}
		char parent[PATH_MAX];
		snprintf(parent, sizeof parent, "%s", *rp);
		char *slash = strrchr(parent, '/');
		if (slash && slash != parent) {
			*slash = 0;
			add_mkdirs(p, parent);
		}
		add_op(p, S_ISDIR(st.st_mode) ? OP_MKDIR : OP_MKFILE, *rp, NULL);
		add_op(p, OP_BIND_RO, *rp, *rp);
	}

	long long tmp = l->tmp_bytes;
	long long inodes = tmp / 8192;
	if (inodes < 1024)
		inodes = 1024;
	if (inodes > 65536)
		inodes = 65536;
	add_op(p, OP_MKDIR, "tmp", NULL);
	snprintf(opts, sizeof opts, "size=%lld,nr_inodes=%lld,mode=1777", tmp, inodes);
	add_op(p, OP_TMPFS, "tmp", opts);

	if (add_box(p, sb, spec->box_subdir, spec->box_home, err, errlen) < 0)
		return -1;

	add_op(p, OP_MKDIR, "dev", NULL);
	static const char *const devs[] = {"null", "zero", "full", "random", "urandom"};
	for (size_t i = 0; i < sizeof devs / sizeof devs[0]; i++) {
		char rel[32], dev[32];
		snprintf(rel, sizeof rel, "dev/%s", devs[i]);
		snprintf(dev, sizeof dev, "/dev/%s", devs[i]);
		add_op(p, OP_MKFILE, rel, NULL);
		add_op(p, OP_BIND, rel, dev);
	}
	add_op(p, OP_SYMLINK, "dev/fd", "/proc/self/fd");
	add_op(p, OP_SYMLINK, "dev/stdin", "/proc/self/fd/0");
	add_op(p, OP_SYMLINK, "dev/stdout", "/proc/self/fd/1");
	add_op(p, OP_SYMLINK, "dev/stderr", "/proc/self/fd/2");
	add_op(p, OP_MKDIR, "dev/shm", NULL);
	/* /dev/shm is the run's /tmp: one cap for both */
	add_op(p, OP_BIND, "dev/shm", "tmp");
	add_op(p, OP_MKDIR, "proc", NULL);
	add_op(p, OP_PROC, "proc", NULL);

	p->argv = pool_list(p, spec->argv, &p->argc);
	p->env = pool_list(p, spec->env, &p->envc);
	if (p->overflow) {
		snprintf(err, errlen,
			 "sandbox plan too large (too many read-only paths, or arguments and "
			 "environment over %d KiB)",
			 NSINIT_POOL_BYTES / 1024);
		return -1;
	}

	rlim_t fsize = (rlim_t)l->file_bytes;
	p->rl_fsize = (struct rlimit){fsize, fsize};
	p->rl_nofile = (struct rlimit){(rlim_t)l->open_files, (rlim_t)l->open_files};
	/* the stack may use all the memory the cgroup allows (as on most judges) */
	rlim_t stack = (rlim_t)l->memory_kb * 1024;
	p->rl_stack = (struct rlimit){stack, stack};
	/* a backstop only: the cgroup check (every 10 ms, whole tree) is the limit */
	rlim_t cpu_s = (rlim_t)(l->cpu_ms + 999) / 1000 + 1;
	p->rl_cpu = (struct rlimit){cpu_s, cpu_s + 1};
	/* no RLIMIT_NPROC: it counts every process of the host uid, and separate judge
	 * processes (a worker, a `judge run`) may use the same slot uid at once;
	 * pids.max of the run's own cgroup is the limit */
	return 0;
}

void nsplan_explain(const struct nsinit_plan *p, const struct nsinit_report *r, char *buf,
		    size_t len)
{
	const char *what = r->step >= 0 && r->step <= S_SETNS ? step_names[r->step] : "?";
	if (r->step == S_OP && r->op >= 0 && r->op < p->nops) {
		const struct op *o = &p->ops[r->op];
		bool from = o->data != NSINIT_NONE && o->kind != OP_WRITE;
		snprintf(buf, len, "sandbox set-up failed: %s '/%s'%s%s: %s", op_names[o->kind],
			 nsinit_str(p, o->a), from ? " from " : "",
			 from ? nsinit_str(p, o->data) : "", strerror(r->err));
	} else if (r->step == S_EXEC) {
		snprintf(buf, len, "cannot execute '%s': %s", nsinit_str(p, p->argv),
			 strerror(r->err));
	} else {
		snprintf(buf, len, "sandbox set-up failed: %s: %s", what, strerror(r->err));
	}
}
