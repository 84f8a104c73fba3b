/* cg: control groups for runs, v1 and v2 (see cg.h).
 *
 * v1 puts each run in three hierarchies (memory, pids, cpuacct), and a
 * session's also in cpu when that is a hierarchy of its own (cg_add_cpu); v2
 * in one.
 * Files read on the hot path (CPU usage, cgroup.procs) are opened once at
 * creation. Every function returns -errno and never exits.
 */
#define _GNU_SOURCE
#include "runner/cg.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/clock.h"

enum { C_MEM, C_PIDS, C_CPU, C_CPUCTL, C_N };
_Static_assert(C_N <= CG_MAX_CTL, "cg.h's CG_MAX_CTL");

/* The parent folder of controller i (v2: the one folder for all). */
static const char *ctl_dir(const struct cg_root *r, int i)
{
	if (r->version == CG_V2)
		return i == 0 ? r->v2 : "";
	return i == C_MEM ? r->memory : i == C_PIDS ? r->pids : i == C_CPU ? r->cpuacct : r->cpu;
}

static int ctl_count(const struct cg_root *r)
{
	return r->version == CG_V2 ? 1 : C_N;
}

static bool exists(const char *path)
{
	return access(path, F_OK) == 0;
}

/* Writes s to dir/file. Returns 0 or -errno. */
static int write_at(const char *dir, const char *file, const char *s)
{
	char path[PATH_MAX];
	if (snprintf(path, sizeof path, "%s/%s", dir, file) >= (int)sizeof path)
		return -ENAMETOOLONG;
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	int ret = 0;
	size_t len = strlen(s);
	if (write(fd, s, len) != (ssize_t)len)
		ret = -errno ? -errno : -EIO;
	close(fd);
	return ret;
}

/* Reads dir/file (at most len-1 bytes) into buf. Returns 0 or -errno. */
static int read_at(const char *dir, const char *file, char *buf, size_t len)
{
	char path[PATH_MAX];
	if (snprintf(path, sizeof path, "%s/%s", dir, file) >= (int)sizeof path)
		return -ENAMETOOLONG;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	ssize_t n = read(fd, buf, len - 1);
	int ret = n < 0 ? -errno : 0;
	close(fd);
	buf[n > 0 ? n : 0] = 0;
	return ret;
}

/* Finds "key <number>" in text (start of a line). Returns 0 or -ENOENT. */
static int find_key(const char *text, const char *key, long long *val)
{
	size_t klen = strlen(key);
	for (const char *p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
		if (!strncmp(p, key, klen) && p[klen] == ' ') {
			*val = strtoll(p + klen + 1, NULL, 10);
			return 0;
		}
	}
	return -ENOENT;
}

static int mkdir_p1(const char *dir)
{
	if (mkdir(dir, 0755) < 0 && errno != EEXIST)
		return -errno;
	return 0;
}

int cg_root_v2(struct cg_root *root, const char *dir, char *err, size_t errlen)
{
	memset(root, 0, sizeof(*root));
	char probe[PATH_MAX];
	int rc = mkdir_p1(dir);
	if (rc < 0) {
		snprintf(err, errlen, "cannot create cgroup '%s': %s", dir, strerror(-rc));
		return -1;
	}
	snprintf(probe, sizeof probe, "%s/cgroup.procs", dir);
	if (!exists(probe)) {
		snprintf(err, errlen, "'%s' is not a cgroup2 folder", dir);
		return -1;
	}
	root->version = CG_V2;
	snprintf(root->v2, sizeof root->v2, "%s", dir);
	return 0;
}

/* v1: root->cpu = <base>/cpu/<sub> when cpu is mounted apart from cpuacct
 * (e.g. Docker hosts mount "cpu" and "cpuacct" as two hierarchies; systemd
 * mounts "cpu,cpuacct" once, with both names as links to it). */
static void cpu_hierarchy(struct cg_root *root, const char *base, const char *sub)
{
	char cpu[PATH_MAX], acct[PATH_MAX], probe[PATH_MAX + 32];
	root->cpu[0] = 0;
	snprintf(probe, sizeof probe, "%s/cpu/cpu.cfs_quota_us", base);
	if (!exists(probe))
		return;
	snprintf(probe, sizeof probe, "%s/cpu", base);
	if (!realpath(probe, cpu))
		return;
	snprintf(probe, sizeof probe, "%s/cpuacct", base);
	if (realpath(probe, acct) && !strcmp(cpu, acct))
		return;
	if (snprintf(root->cpu, sizeof root->cpu, "%s/%s", cpu, sub) >= (int)sizeof root->cpu ||
	    mkdir_p1(root->cpu) < 0)
		root->cpu[0] = 0;
}

int cg_root_v1(struct cg_root *root, const char *base, const char *sub, char *err, size_t errlen)
{
	memset(root, 0, sizeof(*root));
	static const char *const ctl[C_CPUCTL] = {"memory", "pids", "cpuacct"};
	char *dst[C_CPUCTL] = {root->memory, root->pids, root->cpuacct};
	for (int i = 0; i < C_CPUCTL; i++) {
		char top[PATH_MAX], probe[PATH_MAX + 32];
		snprintf(top, sizeof top, "%s/%s", base, ctl[i]);
		snprintf(probe, sizeof probe, "%s/tasks", top);
		if (!exists(probe)) {
			snprintf(err, errlen, "cgroup v1 controller '%s' is not mounted at '%s'",
				 ctl[i], top);
			return -1;
		}
		if (snprintf(dst[i], 512, "%s/%s", top, sub) >= 512) {
			snprintf(err, errlen, "cgroup path too long");
			return -1;
		}
		int rc = mkdir_p1(dst[i]);
		if (rc < 0) {
			snprintf(err, errlen, "cannot create cgroup '%s': %s", dst[i],
				 strerror(-rc));
			return -1;
		}
	}
	char probe[PATH_MAX + 32];
	snprintf(probe, sizeof probe, "%s/memory.memsw.limit_in_bytes", root->memory);
	root->memsw = exists(probe);
	cpu_hierarchy(root, base, sub);
	root->version = CG_V1;
	return 0;
}

/* v2: a usable root needs memory, pids and cpu for its children. */
static int v2_enable(const char *top, char *err, size_t errlen)
{
	char ctl[512];
	int rc = read_at(top, "cgroup.controllers", ctl, sizeof ctl);
	if (rc < 0 || !strstr(ctl, "memory") || !strstr(ctl, "pids") || !strstr(ctl, "cpu")) {
		snprintf(err, errlen,
			 "cgroup2 at '%s' lacks the memory, pids or cpu controller (has: %s)", top,
			 rc < 0 ? strerror(-rc) : ctl);
		return -1;
	}
	rc = write_at(top, "cgroup.subtree_control", "+memory +pids +cpu");
	if (rc < 0) {
		snprintf(err, errlen,
			 "cannot enable controllers in '%s/cgroup.subtree_control': %s", top,
			 strerror(-rc));
		return -1;
	}
	return 0;
}

int cg_detect(struct cg_root *root, const char *spec, const char *sub, char *err, size_t errlen)
{
	if (!sub || !*sub || strchr(sub, '/') || sub[0] == '.') {
		snprintf(err, errlen, "bad cgroup parent name '%s'", sub ? sub : "");
		return -1;
	}
	const char *base = spec && *spec && strcmp(spec, "auto") ? spec : "/sys/fs/cgroup";
	char probe[PATH_MAX + 32];
	snprintf(probe, sizeof probe, "%s/cgroup.controllers", base);
	if (exists(probe)) {
		char dir[PATH_MAX + 8];
		if (v2_enable(base, err, errlen) < 0)
			return -1;
		snprintf(dir, sizeof dir, "%s/%s", base, sub);
		if (cg_root_v2(root, dir, err, errlen) < 0)
			return -1;
		return v2_enable(dir, err, errlen);
	}
	snprintf(probe, sizeof probe, "%s/memory", base);
	if (exists(probe))
		return cg_root_v1(root, base, sub, err, errlen);
	snprintf(err, errlen,
		 "no usable cgroups at '%s': need cgroup2 (cgroup.controllers) or the v1 "
		 "memory, pids and cpuacct controllers",
		 base);
	return -1;
}

int cg_root_oci(struct cg_root *root, const char *base, const char *sub, char *err, size_t errlen)
{
	const char *b = base && *base && strcmp(base, "auto") ? base : "/sys/fs/cgroup";
	char probe[PATH_MAX];
	if (strlen(b) >= sizeof root->base || !*sub || strlen(sub) >= sizeof root->sub ||
	    strchr(sub, '/')) {
		snprintf(err, errlen, "bad cgroup parent '%s/%s'", b, sub);
		return -1;
	}
	snprintf(probe, sizeof probe, "%s/cgroup.controllers", b);
	int rc;
	bool v1 = !exists(probe);
	if (v1) {
		rc = cg_root_v1(root, b, sub, err, errlen);
	} else {
		snprintf(probe, sizeof probe, "%s/%s", b, sub);
		rc = cg_root_v2(root, probe, err, errlen);
	}
	if (rc < 0)
		return -1;
	root->every_v1 = v1;
	snprintf(root->base, sizeof root->base, "%s", b);
	snprintf(root->sub, sizeof root->sub, "%s", sub);
	return 0;
}

void cg_close(struct cg *cg)
{
	if (cg->cpu_fd >= 0)
		close(cg->cpu_fd);
	cg->cpu_fd = -1;
	for (int i = 0; i < C_N; i++) {
		if (cg->procs_fd[i] >= 0)
			close(cg->procs_fd[i]);
		cg->procs_fd[i] = -1;
		if (cg->tasks_fd[i] >= 0)
			close(cg->tasks_fd[i]);
		cg->tasks_fd[i] = -1;
	}
	if (cg->dir_fd >= 0)
		close(cg->dir_fd);
	cg->dir_fd = -1;
}

static int cg_path(const struct cg *cg, int i, const char *file, char *buf, size_t len)
{
	int n = file ? snprintf(buf, len, "%s/%s/%s", ctl_dir(cg->root, i), cg->name, file)
		     : snprintf(buf, len, "%s/%s", ctl_dir(cg->root, i), cg->name);
	return n >= (int)len ? -ENAMETOOLONG : 0;
}

/* Sets up cg for name under root with every fd closed. -EINVAL on a bad name. */
static int cg_init(const struct cg_root *root, const char *name, struct cg *cg)
{
	memset(cg, 0, sizeof(*cg));
	cg->root = root;
	cg->cpu_fd = cg->dir_fd = -1;
	for (int i = 0; i < C_N; i++)
		cg->procs_fd[i] = cg->tasks_fd[i] = -1;
	if (root->version == CG_NONE || strlen(name) >= sizeof cg->name || strchr(name, '/') ||
	    !strcmp(name, ".") || !strcmp(name, ".."))
		return -EINVAL;
	strcpy(cg->name, name);
	return 0;
}

/* Opens the CPU usage file of cg (may be missing on a bare cgroup2 tree: then
 * cg_cpu_us fails). */
static void open_cpu(struct cg *cg)
{
	char path[PATH_MAX];
	if (cg->root->version == CG_V2)
		cg_path(cg, 0, "cpu.stat", path, sizeof path);
	else
		cg_path(cg, C_CPU, "cpuacct.usage", path, sizeof path);
	cg->cpu_fd = open(path, O_RDONLY | O_CLOEXEC);
}

int cg_open(const struct cg_root *root, const char *name, struct cg *cg)
{
	char path[PATH_MAX];
	int rc = cg_init(root, name, cg);
	if (rc < 0)
		return rc;
	int found = 0;
	for (int i = 0; i < ctl_count(root); i++) {
		struct stat st;
		if (!ctl_dir(root, i)[0] || cg_path(cg, i, NULL, path, sizeof path) < 0 ||
		    stat(path, &st) < 0 || !S_ISDIR(st.st_mode))
			continue;
		cg->created[i] = true;
		found++;
		if (root->version == CG_V2)
			cg->dir_fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (cg_path(cg, i, "cgroup.procs", path, sizeof path) == 0)
			cg->procs_fd[i] = open(path, O_RDWR | O_CLOEXEC);
	}
	if (!found)
		return -ENOENT;
	open_cpu(cg);
	return 0;
}

int cg_create(const struct cg_root *root, const char *name, struct cg *cg, char *err, size_t errlen)
{
	if (cg_init(root, name, cg) < 0) {
		snprintf(err, errlen, "bad cgroup name '%s'", name);
		return -EINVAL;
	}
	char path[PATH_MAX];
	int rc;
	/* v1's cpu hierarchy only through cg_add_cpu */
	for (int i = 0; i < ctl_count(root) && i != C_CPUCTL; i++) {
		if ((rc = cg_path(cg, i, NULL, path, sizeof path)) < 0)
			goto fail;
		if (mkdir(path, 0755) < 0) {
			rc = -errno;
			goto fail;
		}
		cg->created[i] = true;
		if ((rc = cg_path(cg, i, "cgroup.procs", path, sizeof path)) < 0)
			goto fail;
		cg->procs_fd[i] = open(path, O_RDWR | O_CLOEXEC);
		if (cg->procs_fd[i] < 0) {
			rc = -errno;
			goto fail;
		}
		if (root->version != CG_V1) {
			if ((rc = cg_path(cg, i, NULL, path, sizeof path)) < 0)
				goto fail;
			cg->dir_fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
			if (cg->dir_fd < 0) {
				rc = -errno;
				goto fail;
			}
			continue;
		}
		if ((rc = cg_path(cg, i, "tasks", path, sizeof path)) < 0)
			goto fail;
		cg->tasks_fd[i] = open(path, O_WRONLY | O_CLOEXEC);
		if (cg->tasks_fd[i] < 0) {
			rc = -errno;
			goto fail;
		}
	}
	open_cpu(cg);
	return 0;
fail:
	snprintf(err, errlen, "cannot create cgroup '%s': %s", path, strerror(-rc));
	cg_remove(cg);
	return rc;
}

static int set_one(struct cg *cg, int i, const char *file, long long v, char *err, size_t errlen)
{
	char dir[PATH_MAX], val[32];
	cg_path(cg, i, NULL, dir, sizeof dir);
	snprintf(val, sizeof val, "%lld", v);
	int rc = write_at(dir, file, val);
	if (rc < 0)
		snprintf(err, errlen, "cannot set '%s/%s' to %s: %s", dir, file, val,
			 rc == -ENOENT ? "no such file (controller not enabled here)"
				       : strerror(-rc));
	return rc;
}

int cg_set_limits(struct cg *cg, long memory_kb, long pids, char *err, size_t errlen)
{
	int rc;
	long long bytes = (long long)memory_kb * 1024;
	if (cg->root->version == CG_V2) {
		if (memory_kb > 0) {
			if ((rc = set_one(cg, 0, "memory.max", bytes, err, errlen)) < 0)
				return rc;
			char probe[PATH_MAX];
			cg_path(cg, 0, "memory.swap.max", probe, sizeof probe);
			if (exists(probe) &&
			    (rc = set_one(cg, 0, "memory.swap.max", 0, err, errlen)) < 0)
				return rc;
		}
		if (pids > 0 && (rc = set_one(cg, 0, "pids.max", pids, err, errlen)) < 0)
			return rc;
		return 0;
	}
	if (memory_kb > 0) {
		bool memsw_done = false;
		rc = set_one(cg, C_MEM, "memory.limit_in_bytes", bytes, err, errlen);
		if (rc == -EINVAL && cg->root->memsw) {
			/* going up: memory may never exceed memsw, so memsw goes first */
			rc = set_one(cg, C_MEM, "memory.memsw.limit_in_bytes", bytes, err, errlen);
			memsw_done = rc == 0;
			if (rc == 0)
				rc =
				    set_one(cg, C_MEM, "memory.limit_in_bytes", bytes, err, errlen);
		}
		if (rc < 0)
			return rc;
		if (cg->root->memsw && !memsw_done &&
		    (rc = set_one(cg, C_MEM, "memory.memsw.limit_in_bytes", bytes, err, errlen)) <
			0)
			return rc;
	}
	if (pids > 0 && (rc = set_one(cg, C_PIDS, "pids.max", pids, err, errlen)) < 0)
		return rc;
	return 0;
}

int cg_join(struct cg *cg, pid_t pid)
{
	char buf[24];
	int len = snprintf(buf, sizeof buf, "%d", (int)pid);
	for (int i = 0; i < ctl_count(cg->root); i++) {
		if (!cg->created[i])
			continue;
		if (cg->procs_fd[i] < 0)
			return -EBADF;
		if (pwrite(cg->procs_fd[i], buf, (size_t)len, 0) != len)
			return -errno;
	}
	return 0;
}

int cg_self_join_fds(const struct cg *cg, int fds[CG_MAX_CTL])
{
	int n = 0;
	if (cg->root->version != CG_V1)
		return 0;
	for (int i = 0; i < C_N; i++) {
		if (!cg->created[i])
			continue;
		if (cg->tasks_fd[i] < 0)
			return 0;
		fds[n++] = cg->tasks_fd[i];
	}
	return n;
}

int cg_add_cpu(struct cg *cg, char *err, size_t errlen)
{
	char path[PATH_MAX];
	int rc;
	if (cg->root->version != CG_V1 || !cg->root->cpu[0] || cg->created[C_CPUCTL])
		return 0;
	if ((rc = cg_path(cg, C_CPUCTL, NULL, path, sizeof path)) < 0)
		goto fail;
	if (mkdir(path, 0755) < 0) {
		rc = -errno;
		goto fail;
	}
	cg->created[C_CPUCTL] = true;
	if ((rc = cg_path(cg, C_CPUCTL, "cgroup.procs", path, sizeof path)) < 0 ||
	    (cg->procs_fd[C_CPUCTL] = open(path, O_RDWR | O_CLOEXEC)) < 0 ||
	    (rc = cg_path(cg, C_CPUCTL, "tasks", path, sizeof path)) < 0 ||
	    (cg->tasks_fd[C_CPUCTL] = open(path, O_WRONLY | O_CLOEXEC)) < 0) {
		rc = rc < 0 ? rc : -errno;
		goto fail;
	}
	return 0;
fail:
	snprintf(err, errlen, "cannot create cgroup '%s': %s", path, strerror(-rc));
	if (cg->procs_fd[C_CPUCTL] >= 0)
		close(cg->procs_fd[C_CPUCTL]);
	if (cg->tasks_fd[C_CPUCTL] >= 0)
		close(cg->tasks_fd[C_CPUCTL]);
	cg->procs_fd[C_CPUCTL] = cg->tasks_fd[C_CPUCTL] = -1;
	if (cg->created[C_CPUCTL] && cg_path(cg, C_CPUCTL, NULL, path, sizeof path) == 0)
		rmdir(path);
	cg->created[C_CPUCTL] = false;
	return rc;
}

/* The controller whose folder holds cg's cpu.* files, or -1 when none. */
static int cpu_ctl(const struct cg *cg)
{
	if (cg->root->version == CG_V2)
		return 0;
	if (cg->root->cpu[0])
		return cg->created[C_CPUCTL] ? C_CPUCTL : -1;
	char probe[PATH_MAX];
	if (cg_path(cg, C_CPU, "cpu.cfs_quota_us", probe, sizeof probe) < 0 || !exists(probe))
		return -1;
	return C_CPU;
}

/* The CFS period of cg_set_cpu, in microseconds: the kernel's default. */
#define CPU_PERIOD_US 100000L

int cg_set_cpu(struct cg *cg, long millis, char *err, size_t errlen)
{
	int i = cpu_ctl(cg);
	if (i < 0) {
		snprintf(err, errlen, "no cpu controller for cgroup '%s'", cg->name);
		return -ENOENT;
	}
	/* the kernel's least quota is 1 ms */
	long long quota = millis > 0 ? (long long)millis * CPU_PERIOD_US / 1000 : -1;
	if (quota > 0 && quota < 1000)
		quota = 1000;
	if (cg->root->version == CG_V2) {
		char dir[PATH_MAX], val[64];
		cg_path(cg, 0, NULL, dir, sizeof dir);
		if (quota > 0)
			snprintf(val, sizeof val, "%lld %ld", quota, CPU_PERIOD_US);
		else
			snprintf(val, sizeof val, "max %ld", CPU_PERIOD_US);
		int rc = write_at(dir, "cpu.max", val);
		if (rc < 0)
			snprintf(err, errlen, "cannot set '%s/cpu.max' to %s: %s", dir, val,
				 strerror(-rc));
		return rc;
	}
	int rc = set_one(cg, i, "cpu.cfs_period_us", CPU_PERIOD_US, err, errlen);
	return rc < 0 ? rc : set_one(cg, i, "cpu.cfs_quota_us", quota, err, errlen);
}

int cg_set_cpu_weight(struct cg *cg, long weight, char *err, size_t errlen)
{
	int i = cpu_ctl(cg);
	if (i < 0) {
		snprintf(err, errlen, "no cpu controller for cgroup '%s'", cg->name);
		return -ENOENT;
	}
	if (weight < 1)
		weight = 1;
	if (weight > 10000)
		weight = 10000;
	if (cg->root->version == CG_V2)
		return set_one(cg, i, "cpu.weight", weight, err, errlen);
	/* systemd's conversion; the kernel's least is 2 */
	long long shares = (long long)weight * 1024 / 100;
	return set_one(cg, i, "cpu.shares", shares < 2 ? 2 : shares, err, errlen);
}

int cg_cpu_throttled_us(struct cg *cg, long long *us)
{
	char dir[PATH_MAX], buf[1024];
	int i = cpu_ctl(cg), rc;
	if (i < 0)
		return -ENOENT;
	cg_path(cg, i, NULL, dir, sizeof dir);
	if ((rc = read_at(dir, "cpu.stat", buf, sizeof buf)) < 0)
		return rc;
	if (cg->root->version == CG_V2)
		return find_key(buf, "throttled_usec", us);
	if ((rc = find_key(buf, "throttled_time", us)) < 0)
		return rc;
	*us /= 1000;
	return 0;
}

int cg_clone_into_fd(const struct cg *cg)
{
	return cg->root->version == CG_V2 ? cg->dir_fd : -1;
}

int cg_cpu_us(struct cg *cg, long long *us)
{
	char buf[512];
	if (cg->cpu_fd < 0)
		return -ENOENT;
	ssize_t n = pread(cg->cpu_fd, buf, sizeof buf - 1, 0);
	if (n < 0)
		return -errno;
	buf[n] = 0;
	if (cg->root->version == CG_V2)
		return find_key(buf, "usage_usec", us);
	*us = strtoll(buf, NULL, 10) / 1000;
	return 0;
}

/* A memory counter in bytes of cg's memory controller, as KiB. */
static int read_memory_kb(struct cg *cg, const char *v2_file, const char *v1_file, long *kb)
{
	char dir[PATH_MAX], buf[64];
	bool v2 = cg->root->version == CG_V2;
	cg_path(cg, v2 ? 0 : C_MEM, NULL, dir, sizeof dir);
	int rc = read_at(dir, v2 ? v2_file : v1_file, buf, sizeof buf);
	if (rc < 0)
		return rc;
	*kb = (long)(strtoll(buf, NULL, 10) / 1024);
	return 0;
}

int cg_memory_peak_kb(struct cg *cg, long *kb)
{
	return read_memory_kb(cg, "memory.peak", "memory.max_usage_in_bytes", kb);
}

int cg_memory_current_kb(struct cg *cg, long *kb)
{
	return read_memory_kb(cg, "memory.current", "memory.usage_in_bytes", kb);
}

int cg_oom_kills(struct cg *cg, long *count)
{
	char dir[PATH_MAX], buf[512];
	long long v;
	bool v2 = cg->root->version == CG_V2;
	cg_path(cg, v2 ? 0 : C_MEM, NULL, dir, sizeof dir);
	int rc = read_at(dir, v2 ? "memory.events" : "memory.oom_control", buf, sizeof buf);
	if (rc < 0)
		return rc;
	if ((rc = find_key(buf, "oom_kill", &v)) < 0)
		return rc;
	*count = (long)v;
	return 0;
}

/* Reads a number from file of controller i of cg: the whole file (key NULL) or
 * the value of "key <n>". 0 or -errno. */
static int read_num(struct cg *cg, int i, const char *file, const char *key, long *out)
{
	char dir[PATH_MAX], buf[1024];
	long long v;
	cg_path(cg, i, NULL, dir, sizeof dir);
	int rc = read_at(dir, file, buf, sizeof buf);
	if (rc < 0)
		return rc;
	if (key) {
		if ((rc = find_key(buf, key, &v)) < 0)
			return rc;
	} else {
		char *end;
		v = strtoll(buf, &end, 10);
		if (end == buf)
			return -EINVAL;
	}
	*out = (long)v;
	return 0;
}

int cg_memory_failcnt(struct cg *cg, long *count)
{
	if (cg->root->version == CG_V2)
		return read_num(cg, 0, "memory.events", "max", count);
	return read_num(cg, C_MEM, "memory.failcnt", NULL, count);
}

int cg_pids_current(struct cg *cg, long *count)
{
	return read_num(cg, cg->root->version == CG_V2 ? 0 : C_PIDS, "pids.current", NULL, count);
}

int cg_pids_limit_hits(struct cg *cg, long *count)
{
	return read_num(cg, cg->root->version == CG_V2 ? 0 : C_PIDS, "pids.events", "max", count);
}

int cg_list(struct cg *cg, bool threads, pid_t *ids, int max)
{
	char path[PATH_MAX];
	bool v2 = cg->root->version == CG_V2;
	const char *file = !threads ? "cgroup.procs" : v2 ? "cgroup.threads" : "tasks";
	if (cg_path(cg, v2 ? 0 : C_MEM, file, path, sizeof path) < 0)
		return -ENAMETOOLONG;
	FILE *f = fopen(path, "re");
	if (!f)
		return -errno;
	int n = 0;
	long id;
	while (n < max && fscanf(f, "%ld", &id) == 1)
		if (id > 0)
			ids[n++] = (pid_t)id;
	fclose(f);
	return n;
}

int cg_populated(struct cg *cg)
{
	char dir[PATH_MAX], buf[4096];
	int rc;
	if (cg->root->version == CG_V2) {
		long long v;
		cg_path(cg, 0, NULL, dir, sizeof dir);
		if ((rc = read_at(dir, "cgroup.events", buf, sizeof buf)) < 0)
			return rc;
		if ((rc = find_key(buf, "populated", &v)) < 0)
			return rc;
		return v != 0;
	}
	for (int i = 0; i < C_N; i++) {
		if (!cg->created[i])
			continue;
		cg_path(cg, i, NULL, dir, sizeof dir);
		if ((rc = read_at(dir, "cgroup.procs", buf, sizeof buf)) < 0)
			return rc;
		if (buf[0])
			return 1;
	}
	return 0;
}

/* Kills every pid listed in dir/cgroup.procs. Returns how many were listed. */
static int kill_listed(const char *dir)
{
	char path[PATH_MAX + 16];
	snprintf(path, sizeof path, "%s/cgroup.procs", dir);
	FILE *f = fopen(path, "re");
	if (!f)
		return 0;
	int n = 0, pid;
	while (fscanf(f, "%d", &pid) == 1) {
		if (pid > 0)
			kill(pid, SIGKILL);
		n++;
	}
	fclose(f);
	return n;
}

/* Kills the processes of the cgroup folder(s) dirs[] until none is left (a fork
 * bomb may add some between listing and killing); at most ~2 s. */
static int kill_dirs(const char *const *dirs, int n, bool v2)
{
	if (v2) {
		/* cgroup.kill (5.14+) kills the whole tree atomically */
		if (write_at(dirs[0], "cgroup.kill", "1") == 0)
			return 0;
	}
	for (int round = 0; round < 400; round++) {
		int listed = 0;
		for (int i = 0; i < n; i++)
			listed += kill_listed(dirs[i]);
		if (!listed)
			return 0;
		clock_sleep_ms(round < 20 ? 1 : 5);
	}
	return -EBUSY;
}

int cg_kill(struct cg *cg)
{
	char dirs[C_N][PATH_MAX];
	const char *d[C_N];
	int n = 0;
	for (int i = 0; i < ctl_count(cg->root); i++) {
		if (!cg->created[i])
			continue;
		cg_path(cg, i, NULL, dirs[n], sizeof dirs[n]);
		d[n] = dirs[n];
		n++;
	}
	if (!n)
		return 0;
	return kill_dirs(d, n, cg->root->version == CG_V2);
}

/* rmdir that waits a little for dying processes to leave. */
static int rmdir_wait(const char *dir)
{
	for (int round = 0; round < 200; round++) {
		if (rmdir(dir) == 0 || errno == ENOENT)
			return 0;
		if (errno != EBUSY)
			return -errno;
		clock_sleep_ms(round < 20 ? 1 : 10);
	}
	return -EBUSY;
}

/* Kills what is in dir and the cgroups below it and removes them, children first.
 * 0 or -errno. */
static int remove_tree(const char *dir, bool v2)
{
	DIR *d = opendir(dir);
	if (!d)
		return errno == ENOENT ? 0 : -errno;
	struct dirent *e;
	while ((e = readdir(d))) {
		char sub[PATH_MAX];
		if (e->d_type != DT_DIR || e->d_name[0] == '.' ||
		    snprintf(sub, sizeof sub, "%s/%s", dir, e->d_name) >= (int)sizeof sub)
			continue;
		remove_tree(sub, v2);
	}
	closedir(d);
	const char *dd[1] = {dir};
	kill_dirs(dd, 1, v2);
	return rmdir_wait(dir);
}

/* v1 every_v1: calls fn(parent, arg) for <base>/<h>/<sub> of every hierarchy h
 * that has it; else for each controller's parent of root. */
static void each_parent(const struct cg_root *root, void (*fn)(const char *parent, void *arg),
			void *arg)
{
	if (!root->every_v1) {
		for (int i = 0; i < ctl_count(root); i++)
			if (ctl_dir(root, i)[0])
				fn(ctl_dir(root, i), arg);
		return;
	}
	DIR *d = opendir(root->base);
	if (!d)
		return;
	struct dirent *e;
	while ((e = readdir(d))) {
		char parent[PATH_MAX];
		if (e->d_name[0] == '.' ||
		    snprintf(parent, sizeof parent, "%s/%s/%s", root->base, e->d_name, root->sub) >=
			(int)sizeof parent ||
		    !exists(parent))
			continue;
		fn(parent, arg);
	}
	closedir(d);
}

struct remove_arg {
	const char *name;
	int ret;
};

static void remove_in(const char *parent, void *varg)
{
	struct remove_arg *a = varg;
	char dir[PATH_MAX];
	if (snprintf(dir, sizeof dir, "%s/%s", parent, a->name) >= (int)sizeof dir)
		return;
	int rc = remove_tree(dir, false);
	if (rc < 0 && !a->ret)
		a->ret = rc;
}

int cg_remove(struct cg *cg)
{
	int ret = 0;
	/* no name: never the parent itself */
	if (!cg->root || !cg->name[0])
		return 0;
	cg_close(cg);
	int pop = cg_populated(cg);
	if (pop != 0)
		cg_kill(cg);
	for (int i = 0; i < ctl_count(cg->root); i++) {
		if (!cg->created[i])
			continue;
		char dir[PATH_MAX];
		cg_path(cg, i, NULL, dir, sizeof dir);
		int rc = rmdir_wait(dir);
		if (rc < 0 && !ret)
			ret = rc;
		cg->created[i] = false;
	}
	if (cg->root->every_v1) {
		/* the hierarchies runsc filled besides ours (cpu, devices, freezer...) */
		struct remove_arg a = {.name = cg->name};
		each_parent(cg->root, remove_in, &a);
		if (a.ret < 0 && !ret)
			ret = a.ret;
	}
	return ret;
}

/* True when name is "<word>-<owner>-...": a cgroup owner made (owner.h). */
static bool owned_by(const char *name, const char *owner)
{
	const char *dash = strchr(name, '-');
	size_t olen = strlen(owner);
	return dash && dash > name && olen && !strncmp(dash + 1, owner, olen) &&
	       dash[1 + olen] == '-';
}

/* Kills the processes of dir and of the cgroups below it, without waiting. */
static void kill_tree(const char *dir, bool v2)
{
	if (v2 && write_at(dir, "cgroup.kill", "1") == 0)
		return;
	DIR *d = opendir(dir);
	if (!d)
		return;
	struct dirent *e;
	while ((e = readdir(d))) {
		char sub[PATH_MAX];
		if (e->d_type != DT_DIR || e->d_name[0] == '.' ||
		    snprintf(sub, sizeof sub, "%s/%s", dir, e->d_name) >= (int)sizeof sub)
			continue;
		kill_tree(sub, v2);
	}
	closedir(d);
	kill_listed(dir);
}

struct owner_arg {
	const char *owner;
	bool remove; /* else only kill */
	int n;
};

static void owner_in(const char *parent, void *varg)
{
	struct owner_arg *a = varg;
	char probe[PATH_MAX];
	snprintf(probe, sizeof probe, "%s/cgroup.controllers", parent);
	bool v2 = exists(probe);
	DIR *d = opendir(parent);
	if (!d)
		return;
	struct dirent *e;
	while ((e = readdir(d))) {
		char dir[PATH_MAX];
		if (e->d_type != DT_DIR || !owned_by(e->d_name, a->owner) ||
		    snprintf(dir, sizeof dir, "%s/%s", parent, e->d_name) >= (int)sizeof dir)
			continue;
		if (!a->remove) {
			kill_tree(dir, v2);
			a->n++;
		} else if (remove_tree(dir, v2) == 0) {
			a->n++;
		}
	}
	closedir(d);
}

int cg_owner_kill(const char *parent, const char *owner)
{
	struct owner_arg a = {.owner = owner};
	owner_in(parent, &a);
	return a.n;
}

int cg_owner_remove(const char *parent, const char *owner)
{
	struct owner_arg a = {.owner = owner, .remove = true};
	owner_in(parent, &a);
	return a.n;
}

void cg_root_parents(const struct cg_root *root, void (*fn)(const char *parent, void *arg),
		     void *arg)
{
	if (!root->every_v1) {
		for (int i = 0; i < ctl_count(root); i++)
			if (ctl_dir(root, i)[0])
				fn(ctl_dir(root, i), arg);
		return;
	}
	/* every mounted hierarchy, whether runsc made the parent there yet or not */
	DIR *d = opendir(root->base);
	if (!d)
		return;
	struct dirent *e;
	while ((e = readdir(d))) {
		char parent[PATH_MAX], probe[PATH_MAX + 16];
		if (e->d_name[0] == '.' || snprintf(parent, sizeof parent, "%s/%s/%s", root->base,
						    e->d_name, root->sub) >= (int)sizeof parent)
			continue;
		snprintf(probe, sizeof probe, "%s/%s/cgroup.procs", root->base, e->d_name);
		if (exists(probe))
			fn(parent, arg);
	}
	closedir(d);
}
