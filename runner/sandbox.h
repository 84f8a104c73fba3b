/* sandbox: run one program in an isolated box; backends (runner/gvisor/, runner/native/) behind one
 * call.
 *
 * A `struct sandbox` is the workspace of one submission: a private, size-capped
 * folder (the box) that every run of that submission sees at /box, its working
 * directory. Each sandbox_run() starts a fresh sandbox (new namespaces, or a new
 * gVisor container) around the shared box, so compile and test runs of one
 * submission share files and nothing else. Different submissions never share a
 * box. A gVisor sandbox (the container, not the box) may serve the runs of
 * several workspaces one after the other, only when they have the same reuse
 * key (sandbox_set_reuse_key: the API key of their submissions): each run still
 * gets its own box, /tmp, IPC namespace, uid and environment, and nothing of an
 * earlier run survives it (see runner/gvisor/gvisor.c). Different keys never share.
 *
 * Inside a run: / is read-only (the host's /usr, /lib, /lib64, /bin, /sbin and the
 * spec's ro_paths, bound at the same paths; a minimal /etc and /dev), /box is
 * the writable box, /tmp a private tmpfs capped by limits.tmp_bytes, /proc is the
 * run's own. The program runs as an unprivileged uid with no capabilities, no
 * network, and only the environment the spec gives.
 */
#pragma once
#include <limits.h>
#include <stdbool.h>
#include <stddef.h>

#include "common/strbuf.h"

enum sandbox_backend { SANDBOX_GVISOR, SANDBOX_NATIVE };

/* Where a run with run_spec.box_home sees its box as well as at /box. */
#define SANDBOX_HOME "/home/user"

/* The runner's statuses. `ok` never reaches a user: grading turns it into a verdict. */
enum run_status {
	RUN_OK,
	RUN_RUNTIME_ERROR,
	RUN_TIMEOUT,
	RUN_MEMORY_LIMIT,
	RUN_OUTPUT_LIMIT,
	RUN_INTERNAL_ERROR,
};

/* The complete limits of one run: the caller decides every one (grading takes
 * them from judge/grading/limits.h); sandbox_run fills in nothing and refuses a
 * limit <= 0 as internal_error "incomplete limits: <field>". */
struct run_limits {
	long cpu_ms;	   /* CPU time of the whole process tree */
	long wall_ms;	   /* real time from start to the end of the last process */
	long memory_kb;	   /* cgroup memory limit of the program, swap off */
	long processes;	   /* processes plus threads */
	long stdout_bytes; /* capture cap; more output ends the run as output_limit */
	long stderr_bytes; /* capture cap; more stderr is dropped and flagged truncated */
	long file_bytes;   /* RLIMIT_FSIZE */
	long open_files;   /* RLIMIT_NOFILE */
	long tmp_bytes;	   /* size of the run's /tmp */
};

/* Everything the runner takes from its caller's configuration (it never reads
 * judge.ini itself; judge/grading/limits.h fills this from it). */
struct sandbox_options {
	char box_root[PATH_MAX];    /* absolute host folder under which boxes are mounted */
	long box_uid;		    /* first host uid/gid of programs; slot n gets box_uid + n */
	char cgroup_root[PATH_MAX]; /* "auto", or the cgroup under which native runs go */
	/* the cgroup (in each hierarchy) that holds native runs' cgroups; gVisor's
	 * sandboxes go in "<cgroup_parent>-gvisor" */
	char cgroup_parent[64];
	char sandbox[16];	  /* backends to start: "auto", "gvisor" or "native" */
	char tool_sandbox[16];	  /* where trusted tools run under gvisor: "native", "gvisor" */
	char runsc[PATH_MAX];	  /* the runsc binary (a path, or a name looked up in PATH) */
	char gvisor_platform[16]; /* runsc --platform: "ptrace", "systrap" or "kvm" */
	int gvisor_pool;	  /* gVisor sandboxes started ahead of need per runtime */
	/* a sandbox not ready this long after `runsc run` starts is killed; 0 = 20000 */
	int gvisor_start_timeout_ms;
	/* A gVisor sandbox starts before the run it serves is known, so its cgroup
	 * and /tmp are sized for the largest run it may serve. */
	long long gvisor_memory_bytes; /* the largest memory limit of any run */
	long long gvisor_tmp_bytes;    /* the size of /tmp of a run */
	int session_pool;     /* sessions started ahead of need per driver (prestart_prepare) */
	int session_pool_max; /* how far a pool grows under a burst of creates */
	/* Reuse of a gVisor sandbox by later workspaces of the same reuse key:
	 * false = never (keys are ignored). A sandbox is recycled after
	 * gvisor_reuse_runs runs, or gvisor_reuse_s seconds after its start. */
	bool gvisor_reuse;
	int gvisor_reuse_runs;
	int gvisor_reuse_s;
	/* judge.ini's warm_start: gVisor sandboxes start runs_spec's zygote_argv and
	 * fork programs from it (docs/warm-start.md); false = a fresh process per run */
	bool warm_start;
};

struct run_spec {
	const char *const *argv; /* argv[0] is an absolute path as seen inside */
	const char *const *env;	 /* "K=V", NULL-terminated; nothing else is passed */
	const char *const
	    *ro_paths;		/* host folders bound read-only at the same path; may be NULL */
	const char *stdin_data; /* fed through a pipe; NULL = empty stdin */
	size_t stdin_len;
	const char *stdin_path; /* host file fed instead of stdin_data, when set */
	struct run_limits limits;
	/* The runtime's warm-up, from its language (languages/<name>.ini): a backend
	 * that starts sandboxes ahead of need runs warm_argv in them before any job
	 * (as nobody, before the box is there) and reads the preload files, so that
	 * the program finds the runtime's files cached. NULL-terminated; may be NULL.
	 * Runs with another warm-up never share a started sandbox. */
	const char *const *warm_argv;
	const char *const *preload;
	/* The language's zygote (docs/warm-start.md): a backend that keeps sandboxes
	 * may start it there and fork the runs whose argv it accepts from it, when
	 * sandbox_options.warm_start is on. NULL-terminated; may be NULL. Part of the
	 * pool's key, like warm_argv. */
	const char *const *zygote_argv;
	/* A trusted tool reading the submission (a compiler, an output validator),
	 * not the submission's program: runs in sandbox_tool_backend(). */
	bool trusted_tool;
	/* Another run of this workspace is likely to follow (a compile, a test that
	 * is not the last): the backend may prepare for it while this one runs. */
	bool more_runs;
	/* Live processes only (sandbox_start): the CPU bandwidth of the whole
	 * sandbox (its cgroup: every process it holds, and for gVisor its sentry
	 * and gofer), in thousandths of a CPU (1000 = one CPU busy all the time);
	 * 0 = unlimited. Enforced by the kernel (cgroup v2 cpu.max, v1 CFS quota):
	 * the sandbox is slowed down, never killed for it. */
	long cpu_millis;
	/* Live processes only: the sandbox's share of contended CPU against its
	 * sibling cgroups, on cgroup v2's cpu.weight scale (1..10000, the kernel's
	 * default 100; v1 cpu.shares = weight × 1024 / 100); 0 and 100 = the
	 * default, written nowhere (a host without the cpu controller still runs
	 * sessions that ask nothing of it). */
	long cpu_weight;
	/* Package installs (runner/install/install.h). Either field makes the run native
	 * whatever the workspace's backend. net_ns_fd > 0: the run joins this
	 * network namespace (an fd of its ns/net) instead of an empty one; 0 = the
	 * default (fd 0 is never a namespace here, and zeroed specs keep meaning
	 * "no network"). box_subdir: the run sees only this folder of the box (a
	 * relative path without "." or ".." parts, an existing folder, no symlink on
	 * the way), writable at /box/<box_subdir>; the rest of /box is empty and
	 * read-only. A live process (sandbox_start, a session's sandbox joining its
	 * egress proxy's namespace) honours net_ns_fd on a backend that joins
	 * namespaces, and is refused on another. */
	int net_ns_fd;
	const char *box_subdir;
	/* The box is at SANDBOX_HOME too (sessions: the home E2B's users expect,
	 * the same folder as /box); ignored with box_subdir. */
	bool box_home;
	/* Live processes only: a folder that sandbox_proc_checkpoint filled. The
	 * sandbox is restored from it (memory, processes, every pipe inside) around
	 * sb's box, which the caller filled with the files it had; argv, env and
	 * ro_paths must be those of the checkpointed start. NULL: a fresh start. */
	const char *restore_dir;
	/* Optional live output: called with the program's bytes as they are read
	 * (fd 1 stdout, 2 stderr), only bytes that also go into the result and
	 * never a backend's own (gVisor's trailer). It runs in the thread of
	 * sandbox_run and must not block: the program's pipes wait meanwhile. */
	void (*on_output)(void *arg, int fd, const char *data, size_t len);
	void *output_arg;
};

struct run_result {
	enum run_status status;
	int exit_code; /* when the program exited (signal == 0) */
	int signal;    /* signal that ended the program, or 0 */
	long cpu_ms;
	long wall_ms;
	long memory_kb; /* peak of the program (not of gVisor's own processes) */
	struct strbuf out;
	struct strbuf err;
	bool out_truncated;
	bool err_truncated;
	char message[256]; /* internal_error: what failed in the sandbox itself */
	/* Which sandbox served the run (gVisor: its container id; "" when none, as
	 * natively), for tests and logs: two runs with the same id ran in the same
	 * sandbox. */
	char sandbox_id[40];
};

struct sandbox;

/* sandbox_global_init's copy of its options (NULL before it was called). */
const struct sandbox_options *sandbox_options(void);
/* Registers fn to run at the start of sandbox_global_shutdown, before the
 * backends stop (last registered first; registering fn again is a no-op): for
 * what holds sandboxes above the backends, such as prestarted sessions. */
void sandbox_on_shutdown(void (*fn)(void));
/* Process-wide set-up: copies opts (the caller keeps its own), opens this
 * process's owner folder under box_root (runner/owner.h: everything its
 * sandboxes put on the host is found from it), reclaims what dead processes
 * left under the same box_root (their processes, mounts, cgroups, runsc state,
 * boxes), detects cgroups, starts the gVisor pool when enabled. Returns 0, or
 * -1 with a message in err (a bad option, or no backend that opts ask for
 * works). Call once before anything below. */
int sandbox_global_init(const struct sandbox_options *opts, char *err, size_t errlen);
/* Stops pools and removes everything the process created; its owner folder goes
 * last (anything still found there is removed and logged). */
void sandbox_global_shutdown(void);
/* For a process that must stop now (a second signal) while other threads may
 * still be running programs: no sandbox starts from now on, and everything the
 * process's sandboxes hold on the host (processes, mounts, cgroups, runsc
 * state, boxes) is killed and removed at once, without runsc and without
 * waiting for the threads. Nothing is freed: runs in progress fail, and the
 * process must exit soon after. The owner folder stays (empty) until the
 * process is gone, so that whoever reclaims next (`judge up`, the next worker)
 * also finds what a thread made in the meantime. */
void sandbox_global_abort(void);
/* Reclaims what dead processes left under box_root (owner.h), as
 * sandbox_global_init does, for a process that runs no sandboxes itself (`judge
 * up` after its worker ended). Returns how many dead owners were reclaimed. */
int sandbox_reclaim_dead(const char *box_root);

/* Parses "gvisor" / "native" / "auto" (auto: gvisor where runsc works, else native). */
int sandbox_backend_parse(const char *s, enum sandbox_backend *out);
const char *sandbox_backend_name(enum sandbox_backend b);
/* Returns true when the backend can run here; else false with the reason in why. */
bool sandbox_backend_works(enum sandbox_backend b, char *why, size_t whylen);
const char *run_status_name(enum run_status s);

/* Creates a workspace with an empty box of at most box_bytes. slot (0..) tells
 * concurrent users apart (host uid, cgroup names). Returns 0 or -errno with a
 * message in err; *out is owned by the caller and freed with sandbox_close(). */
int sandbox_open(enum sandbox_backend backend, int slot, long box_bytes, struct sandbox **out,
		 char *err, size_t errlen);
/* Sets the reuse key of sb (copied; NULL = none, the default): a gVisor sandbox
 * that served sb may serve later workspaces of the same key once sb is closed
 * (and sb may get one that served an earlier workspace of key), never one of
 * another key or without a key. The caller picks keys of one tenant (the
 * worker: "k<api key id>"; the CLI: "cli"). gVisor ignores it when the
 * options' gvisor_reuse is off; natively, with warm_start on, the key's Python
 * runs fork from a zygote of that key only (docs/warm-start.md), none without a
 * key. Call it before the first run. 0, or -EINVAL
 * (a key longer than 63 bytes, or empty). */
int sandbox_set_reuse_key(struct sandbox *sb, const char *key);
/* Writes a file into the box (name relative, no "..", no leading '/'). */
int sandbox_write_file(struct sandbox *sb, const char *name, const void *data, size_t len,
		       int mode);
/* Reads a regular file of the box without following links; at most max bytes. */
int sandbox_read_file(struct sandbox *sb, const char *name, struct strbuf *out, size_t max);
/* The session folder's file calls (sessions' files API). path is relative to
 * the box: no leading '/', no "." or ".." parts, no NUL, at most PATH_MAX; a
 * symlink anywhere on the path is refused (-ELOOP), never followed. They return
 * 0 or -errno: -EINVAL a bad path, -ENOENT, -ELOOP, -EISDIR / -ENOTDIR, -EFBIG
 * (over max), -ENOSPC (the box is full). */
struct sandbox_dirent {
	char name[256];
	char type; /* 'f' file, 'd' folder, 'l' symlink (listed, never followed), 'o' other */
	long long size;
	long long mtime;	/* seconds since the epoch */
	int mode;		/* its permission bits */
	long mtime_ns;		/* the nanoseconds of mtime (a watcher's writes within a second) */
	unsigned long long ino; /* its inode (a watcher tells a rename from a new file) */
};
/* The name sandbox_file_put gives a file while it writes it (renamed into place after). */
#define BOXFILES_PUT_PREFIX ".judge-put-"
/* Writes a file (mode 0644), making its folders (0755) as needed; replaces an existing file. */
int sandbox_file_put(struct sandbox *sb, const char *path, const void *data, size_t len);
/* Reads a regular file (at most max bytes, else -EFBIG). */
int sandbox_file_get(struct sandbox *sb, const char *path, struct strbuf *out, size_t max);
/* Lists a folder ("" = the box), sorted by name; *out is malloc'd (free it). */
int sandbox_file_list(struct sandbox *sb, const char *dir, struct sandbox_dirent **out, size_t *n);
/* The entry path is ("" = the box itself), never following a link. */
int sandbox_file_stat(struct sandbox *sb, const char *path, struct sandbox_dirent *out);
/* Renames from to to (a link moves, not what it points to), making to's
 * folders as needed; replaces a file or an empty folder at to, as rename(2). */
int sandbox_file_move(struct sandbox *sb, const char *from, const char *to);
/* Removes a file, a symlink (not what it points to) or a folder with all it holds. */
int sandbox_file_remove(struct sandbox *sb, const char *path);
/* Reads the target of the symlink path (the link itself, never followed). */
int sandbox_file_readlink(struct sandbox *sb, const char *path, struct strbuf *out);
/* Makes path a symlink to target (stored as given: the code inside resolves it;
 * the host never follows it), making its folders as needed. -EEXIST when
 * something stands there. */
int sandbox_file_symlink(struct sandbox *sb, const char *path, const char *target);
/* Makes the folder path (and its parents, 0755, owned by the box's uid), never
 * following a link on the way. 0 (also when it exists) or -errno as above. */
int sandbox_file_mkdir(struct sandbox *sb, const char *path);
/* Host path of a helper binary of the judge (bin/box_init, bin/sessd ...):
 * $env_var when set and executable, else bin/<name> beside or above the
 * running binary (an installed judge has them beside it), else ./bin/<name>.
 * Returns 0, or -1 when none is executable (out then names bin/<name>). */
int sandbox_helper_path(const char *name, const char *env_var, char *out, size_t len);
/* Host path of the box (for binding it elsewhere, never for following links in it). */
const char *sandbox_box_path(const struct sandbox *sb);
/* The backend and the box size sb was opened with. */
enum sandbox_backend sandbox_backend_of(const struct sandbox *sb);
long sandbox_box_bytes(const struct sandbox *sb);
/* What sb's box holds now, in KiB (its tmpfs's used blocks); -1 when it
 * cannot be read. */
long sandbox_box_used_kb(const struct sandbox *sb);
/* True when nothing has run in sb and nothing was written into its box. */
bool sandbox_is_fresh(const struct sandbox *sb);
/* Swaps the contents of two workspaces (box, slot, uid, backend state): a
 * workspace prepared ahead of need (runner/session/prestart.c) becomes the
 * caller's. Live processes started on either follow with sandbox_proc_rebind. */
void sandbox_swap(struct sandbox *a, struct sandbox *b);
/* Runs spec in a fresh sandbox around the box. Always fills res (initialise it
 * with run_result_init); returns 0 when a status was decided (including
 * internal_error, with res->message set), -1 only on invalid arguments.
 * Every limit of spec->limits must be > 0: one that is not ends the run before
 * it starts as internal_error "incomplete limits: <field>" (returns 0).
 * Every process of the run is dead or dying (SIGKILLed) when it returns; the
 * native backend reaps the last ones at the next run of sb or in sandbox_close.
 * Runs of one sandbox must not overlap (one thread at a time per sandbox). */
int sandbox_run(struct sandbox *sb, const struct run_spec *spec, struct run_result *res);
/* The backend in which the trusted tools of a workspace of backend b run:
 * native under gvisor when the options' tool_sandbox is native (the default) and
 * the native backend works here, else b. The submission's own program always
 * runs in b. Why: a C compile costs ~200 ms more under gVisor's ptrace platform,
 * where every exec and page fault is trapped, and a tool needs a fresh gVisor
 * sandbox of its own. */
enum sandbox_backend sandbox_tool_backend(enum sandbox_backend b);
/* Tells the backend that runs like spec are coming (only its runtime is read:
 * ro_paths, argv, warm_argv, preload), so it can start sandboxes for them ahead of
 * need (gvisor's pools; nothing for native). A long-running worker calls it at
 * start for each language's compile and run. */
void sandbox_prepare(enum sandbox_backend backend, const struct run_spec *spec);
/* Kills anything still running, unmounts and removes the box. */
void sandbox_close(struct sandbox *sb);

/* A live process: a program started in a fresh sandbox around sb's box (as in
 * sandbox_run) whose stdin, stdout and stderr are pipes the caller holds while it
 * runs (sessions' drivers, interactive problems). Limits hold for its whole life:
 * memory_kb, processes, file_bytes, open_files, tmp_bytes are enforced by the
 * backend at once; cpu_ms and wall_ms (counted from the start) by
 * sandbox_proc_wait, plus an RLIMIT_CPU backstop; stdout_bytes and stderr_bytes
 * are the caller's business (it reads the pipes). spec's stdin_data/stdin_path
 * are ignored: stdin is the pipe. gVisor: the sandbox serves this program only
 * and is discarded after it; the box is mounted with shared file access, so what
 * the host writes into the box is seen inside at once, and the other way round. */
struct sandbox_proc;
/* Starts spec in sb's backend (never as a trusted tool). 0 with *out (free it with
 * sandbox_proc_free), or -1 with err. sb must outlive *out. */
int sandbox_start(struct sandbox *sb, const struct run_spec *spec, struct sandbox_proc **out,
		  char *err, size_t errlen);
/* The caller's ends: the program's stdin (write; -1 once closed), stdout and stderr
 * (read). Owned by p: do not close them, use sandbox_proc_close_stdin. Blocking
 * mode; the caller may make them non-blocking. Any may be NULL. */
void sandbox_proc_fds(const struct sandbox_proc *p, int *in_fd, int *out_fd, int *err_fd);
/* Points p at the workspace sb after sandbox_swap moved its box there. */
void sandbox_proc_rebind(struct sandbox_proc *p, struct sandbox *sb);
/* Closes the program's stdin (it reads EOF). */
void sandbox_proc_close_stdin(struct sandbox_proc *p);
/* Sends sig to the program's processes (native: every process of the run;
 * gVisor: the program's process group, through `runsc kill` to box_init).
 * SIGKILL ends the whole sandbox at once. 0 or -errno (-ESRCH: already over). */
int sandbox_proc_signal(struct sandbox_proc *p, int sig);
/* CPU time (ms) and memory (KiB) the sandbox used so far: its cgroup, so for
 * gVisor the sentry and gofer count too (that is the real cost). 0 or -errno. */
int sandbox_proc_usage(struct sandbox_proc *p, long *cpu_ms, long *memory_kb);
/* The sandbox's tasks now (its cgroup's pids.current: processes plus threads;
 * for gVisor the host threads of its sentry, gofer and stubs), how many forks
 * its pids limit refused so far, and how long its CPU limit (run_spec.cpu_millis)
 * held it back, in ms (0 without one). 0, or -errno (any may be NULL). */
int sandbox_proc_tasks(struct sandbox_proc *p, long *tasks, long *pids_refused, long *throttled_ms);
/* How many processes of the sandbox the kernel killed for lack of memory so
 * far (its cgroup's oom_kill count): a session tells a driver killed for
 * memory from one that ended by itself. 0 with *count, or -errno. */
int sandbox_proc_oom_kills(struct sandbox_proc *p, long *count);
/* Waits until the program has ended (every process of it), at most timeout_ms
 * (< 0: until its wall limit), then kills what is left and fills res (status by
 * verdict_decide: timeout when killed at the timeout or past cpu_ms/wall_ms, exit
 * code or signal, memory_limit...). res's out/err stay empty: the caller reads
 * the pipes. Returns 0; -1 when already waited for (res untouched). */
int sandbox_proc_wait(struct sandbox_proc *p, long timeout_ms, struct run_result *res);
/* Kills the program if it still runs, closes the fds, frees p. NULL is fine. */
void sandbox_proc_free(struct sandbox_proc *p);
/* Saves the whole sandbox of p (its memory and every process in it) into the
 * folder dir (made by the caller, empty), for a later sandbox_start with
 * run_spec.restore_dir = dir on any host; the sandbox ends (p then only waits
 * to be freed). The box's files are not saved: the caller keeps them. gVisor
 * only. 0; -1 with err and p running on as it was; -2 with err and the
 * sandbox ended (a checkpoint that failed halfway). */
int sandbox_proc_checkpoint(struct sandbox_proc *p, const char *dir, char *err, size_t errlen);

void run_result_init(struct run_result *res);
void run_result_release(struct run_result *res);
