/* lang: the languages the judge runs, loaded from languages/<name>.ini.
 *
 * A language file, e.g. languages/python.ini:
 *   name = python                 id used by the API and CLI
 *   display_name = Python 3.12
 *   source_file = main.py         name the submission gets in the box
 *   compile = ...                 argv, space-separated; empty = interpreted. A word
 *                                 {options} marks where a request's compiler_options
 *                                 go (Judge0's); without it none are accepted
 *   run = /opt/judge/runtimes/python3.12/bin/python3 main.py
 *   version = ... --version       argv whose first output line is the version
 *   ro_paths = /opt/judge/runtimes/python3.12   colon-separated host folders
 *   env = PYTHONDONTWRITEBYTECODE=1 PATH=/usr/bin:/bin   space-separated
 *   compile_env = ...             env for the compile step (defaults to env)
 *   time_limit_ms / memory_limit_mb / processes   run defaults (0 = judge.ini's)
 *   compile_time_limit_ms / compile_memory_limit_mb / compile_processes
 *   install = languages/install-python.sh   makes the runtime present (make deps)
 *   warm_up = /opt/.../python3 -c pass   argv a sandbox started ahead of need runs
 *                                 before any job (no {source}: the box is not there)
 *   preload = /usr/lib/x86_64-linux-gnu/libstdc++.so.6:...   colon-separated host
 *                                 files such a sandbox reads ahead (missing ones skipped)
 *   session = /opt/.../python3.12 -u {drivers}/python_driver.py   argv of the
 *                                 language's session driver (languages/drivers/PROTOCOL.md);
 *                                 none = no sessions in this language. {drivers} is
 *                                 the absolute path of the drivers folder beside the
 *                                 language files (the repo's or the installed one)
 *   session_env = ...             env of the driver (defaults to env)
 *   compile_in_run = <regex>      a single-source program skips the compile step:
 *                                 its first run stands for it. That run exiting
 *                                 non-zero with a stderr this PCRE2 pattern matches
 *                                 is a compile_error (the stderr its compile output);
 *                                 needs compile (still used for several sources)
 * warm_up and preload only make the first run of a started sandbox faster (the
 * runner passes them on as run_spec's warm_argv and preload); without them only
 * the program itself is read ahead, when it lies outside the box.
 * In compile, run and version, {source} stands for source_file, and a word may be
 * quoted with '...' or "..." to hold blanks (no escapes). Unknown keys, repeated
 * keys, relative program paths and a name other than the file's are errors.
 * languages/selftest/<name><ext of source_file> prints "hello world": the program
 * `judge languages` and `judge selftest` grade in each backend.
 */
#pragma once
#include <stdbool.h>
#include <stddef.h>

/* Where make deps copies languages/drivers, for trees whose own copy a sandbox
 * cannot see (under /tmp or /dev/shm: see lang_load_dir). */
#define LANG_DRIVERS_COPY "/opt/judge/runtimes/drivers"

struct lang {
	char *name;
	char *display_name;
	char *source_file;
	char **compile_argv; /* NULL when interpreted */
	/* where a request's compiler_options go in compile_argv (the compile
	 * command's {options} word, which is not kept), or -1: none accepted */
	int compile_options_at;
	char **run_argv;
	char **version_argv;
	char **ro_paths;
	char **env;
	char **compile_env;
	long time_limit_ms, memory_limit_mb, processes;
	long compile_time_limit_ms, compile_memory_limit_mb, compile_processes;
	char *install;
	char **warm_argv; /* NULL when the language has no warm-up command */
	char **preload;	  /* NULL when none */
	/* The session driver: all three NULL when the language has none.
	 * session_ro_paths is ro_paths plus the drivers folder (bind them all). */
	char **session_argv;
	char **session_env;
	char **session_ro_paths;
	/* compile_in_run: the pattern and its compiled form (lang_compile_error_in_run) */
	char *compile_in_run;
	void *compile_in_run_re;
};

struct lang_registry {
	struct lang *langs;
	int count;
};

/* Loads every *.ini under dir, sorted by name. Returns 0, or -1 with a message. */
int lang_load_dir(struct lang_registry *reg, const char *dir, char *err, size_t errlen);
/* Returns the language called name, or NULL. */
const struct lang *lang_find(const struct lang_registry *reg, const char *name);
void lang_registry_release(struct lang_registry *reg);
/* True when l has compile_in_run and a run whose stderr is err (len bytes)
 * tells a compile error: the pattern matches (an err over
 * LANG_COMPILE_IN_RUN_MAX bytes never does). The caller checks the exit. */
#define LANG_COMPILE_IN_RUN_MAX (64 * 1024)
bool lang_compile_error_in_run(const struct lang *l, const char *err, size_t len);
/* Runs l's version argv on the host with l's env (cwd /tmp, stdin /dev/null) and
 * writes the first line of its output to out. Returns 0, or -1 with the reason in
 * out (no probe, cannot run, non-zero exit, timeout after timeout_ms). Safe to
 * call from a multi-threaded process (posix_spawn). */
int lang_probe_version(const struct lang *l, char *out, size_t outlen, long timeout_ms);
