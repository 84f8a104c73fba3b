/* gvhost: host-side plumbing of the gVisor backend (gvisor.c) — processes, files,
 * mounts, and the sweep of what dead owners left. The cgroups runsc makes for a
 * container are read, limited, killed and removed through cg.c. Nothing here
 * knows about pools or runs. */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* Container ids are "jgv-<owner pid>-<n>" (cg_sweep's prefix "jgv"); runsc puts
 * their cgroups in /sys/fs/cgroup/<controller>/judge-gvisor/<id> on v1, or
 * /sys/fs/cgroup/judge-gvisor/<id> on v2 (linux.cgroupsPath of oci.c). */
#define GVHOST_ID_PREFIX "jgv-"
#define GVHOST_CG_PREFIX "jgv"
#define GVHOST_CG_PARENT "judge-gvisor"

/* Writes s into an existing file (a cgroup knob). Returns 0 or -errno. */
/* snprintf for paths and messages; a name too long ends up cut, and then fails
 * where it is used (no path here comes near PATH_MAX). */
void gvhost_fmt(char *buf, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
int gvhost_write_str(const char *path, const char *s);
/* Creates or truncates path (no symlink followed) with data and mode. 0 or -errno. */
int gvhost_write_file(const char *path, const void *data, size_t len, int mode);
/* Copies a file (to: created or truncated, no symlink followed). Returns 0 or -errno. */
int gvhost_copy_file(const char *from, const char *to, int mode);
/* mkdir -p. Returns 0 or -errno. */
int gvhost_mkdir_p(const char *path, mode_t mode);
/* Removes a tree this backend built; never enters a mount inside it, never follows links. */
void gvhost_rm_tree(const char *path);
/* Unmounts every mount at or below dir, deepest first (lazily). */
void gvhost_umount_below(const char *dir);

/* True when pid exists (EPERM counts as existing). */
bool gvhost_pid_alive(long pid);
/* The owner pid of a "jgv-<pid>-<n>" name, or -1 for other names. */
long gvhost_owner_pid(const char *name);
/* posix_spawnp of argv with the given stdio fds (-1 = /dev/null), default signal
 * dispositions and an empty mask. Safe in a threaded process (all other fds of the
 * judge are O_CLOEXEC). Returns 0 or -errno. */
int gvhost_spawn(const char *const *argv, int in, int out, int err, pid_t *pid);
/* Waits for pid: its exit status, 128 + signal, 0 when SIGCHLD is ignored (status
 * lost), or -1. */
int gvhost_wait_exit(pid_t pid);
/* The same as gvhost_spawn, with the child leading a new process group (so that
 * gvhost_wait_exit_ms can kill everything it forked that stayed in it). */
int gvhost_spawn_group(const char *const *argv, int in, int out, int err, pid_t *pid);
/* gvhost_wait_exit bounded by timeout_ms: past it, SIGKILLs pid's process group
 * and pid, reaps it (briefly), and returns GVHOST_WAIT_TIMEOUT. */
#define GVHOST_WAIT_TIMEOUT (-2)
int gvhost_wait_exit_ms(pid_t pid, int timeout_ms);
/* True when program (a path, or a name looked up in PATH) is executable; else
 * false with the reason in why. */
bool gvhost_find_program(const char *program, char *why, size_t whylen);
/* Reaps zombie children that runsc orphaned to us (comm "exe" or "runsc*"); other
 * children of the process are never waited for. */
void gvhost_reap_orphans(void);
