/* lang: the languages the judge runs, loaded from languages/<name>.ini. Every
 * fact about a language is a key of its file: no C code names a language
 * (tests/integration/layers.sh checks it). This comment is where the keys are
 * documented; docs/ARCHITECTURE.md ("Add a language") and languages/README.md
 * point here. Values are one line; lists are space-separated unless said.
 *
 * Running it:
 *   name = python                 id used by the API and CLI (default: the file's
 *                                 name, which it must equal)
 *   aliases = python3             other names a request may give (/v1, sessions,
 *                                 evaluations); no two languages share a name
 *   default = yes                 the language taken where none is named (judge
 *                                 eval, the first session pool to fill); at most one
 *   display_name = Python 3.12
 *   source_file = main.py         name the submission gets in the box
 *   extensions = .py .py3         endings of the language's source files: judge run
 *                                 guesses the language by them, and a request's or a
 *                                 package's extra files with them are compiled with
 *                                 the main one (default: source_file's ending)
 *   compile = ...                 argv, space-separated; empty = interpreted. A word
 *                                 {options} marks where a request's compiler_options
 *                                 go (Judge0's); without it none are accepted
 *   run = /opt/judge/runtimes/python3.12/bin/python3 main.py
 *   version = ... --version       argv whose first output line is the version
 *   ro_paths = /opt/judge/runtimes/python3.12   colon-separated host folders
 *   env = PYTHONDONTWRITEBYTECODE=1 PATH=/usr/bin:/bin   space-separated
 *   compile_env = ...             env for the compile step (defaults to env)
 *   time_limit_ms = 0             the run's defaults (0 = judge.ini's)
 *   memory_limit_mb = 0
 *   processes = 0
 *   compile_time_limit_ms = 10000   the compile step's (0 = judge.ini's)
 *   compile_memory_limit_mb = 1024
 *   compile_processes = 16
 *   install = languages/install-python.sh   makes the runtime present (make deps)
 *   warm_up = /opt/.../python3 -c pass   argv a sandbox started ahead of need runs
 *                                 before any job (no {source}: the box is not there)
 *   preload = /usr/lib/x86_64-linux-gnu/libstdc++.so.6:...   colon-separated host
 *                                 files such a sandbox reads ahead (missing ones skipped)
 *   compile_server = /usr/.../dotnet .../csharp_compiler.dll   argv of a warm
 *                                 compile server (judge/grading/compsrv.h): a
 *                                 long-lived trusted compiler that takes the source
 *                                 as bytes and gives back compile's output, exit
 *                                 status and files; used, when judge.ini's
 *                                 warm_start is on, for single-source compiles
 *                                 without compiler options; none = always compile
 *   zygote = /opt/.../python3 {drivers}/python_zygote.py json ...   argv of a
 *                                 started runtime that forks each run's program
 *                                 (gVisor, when judge.ini's warm_start is on; the
 *                                 protocol, and the modules after the script:
 *                                 docs/warm-start.md); {drivers} is the drivers
 *                                 folder, then bound read-only in every run too
 *   compile_in_run = <regex>      a single-source program skips the compile step:
 *                                 its first run stands for it. That run exiting
 *                                 non-zero with a stderr this PCRE2 pattern matches
 *                                 is a compile_error (the stderr its compile output);
 *                                 needs compile (still used for several sources)
 *
 * Sessions:
 *   session = /opt/.../python3.12 -u {drivers}/python_driver.py   argv of the
 *                                 language's session driver (languages/drivers/PROTOCOL.md);
 *                                 none = no sessions in this language. {drivers} is
 *                                 the absolute path of the drivers folder beside the
 *                                 language files (the repo's or the installed one)
 *   session_env = ...             env of the driver (defaults to env)
 *   package_manager = pip         the installer of session packages: pip or npm
 *                                 (runner/install/install.h); one language each
 *   package_command = /opt/.../python3.12 -m pip   argv that runs it (the
 *                                 manager's own arguments follow); binds ro_paths
 *   package_dir = .packages/python   its folder in the session's box, relative;
 *                                 the driver puts it on its import path
 *
 * Function (LeetCode style) and test-code (HumanEval style) problems (harness.h):
 *   function_harness = script     how the calls reach the user's function: script
 *                                 (the template reads them as JSON on stdin and the
 *                                 user's code sits beside it as function_file), stl
 *                                 (a generated main() with the arguments as C++
 *                                 standard-library literals), clr (a generated table
 *                                 of .NET literals the template's Main reads); none =
 *                                 no function problems
 *   function_template = function.py   the harness's static part, in languages/harness/
 *   function_file = solution.py   the name the user's code goes by (its file, or
 *                                 its #line name when pasted into a generated harness)
 *   testcode_template = testcode.py   test-code problems' harness (script kind);
 *                                 none = no test-code problems
 *   testcode_file = program.py    the program's file beside it
 *   harness_compiles = yes        the harness compiles the user's file itself, so a
 *                                 harnessed run leaves the compile step out
 *   harness_syntax_errors = SyntaxError ...   types of the harness's load error
 *                                 that make the result a compile_error
 *
 * Compatible fronts:
 *   judge0_ids = 71 100           Judge0 CE language ids this language runs
 *   judge0_name = Python (3.12)   what Judge0's GET /languages calls them
 *                                 (default display_name)
 *   piston_language = javascript  Piston's name of it (default: name)
 *   piston_runtime = node         Piston's runtime field (default: none)
 *   piston_aliases = js node ...  the other names Piston's clients may give
 *   piston_compiled = no          whether Piston shows a compile stage (default:
 *                                 yes when compile is set)
 *   e2b_names = javascript js     the names E2B's SDKs give it (the first is the
 *                                 one the E2B front reports); default none
 *   e2b_default = yes             an E2B sandbox's default context (default no)
 *
 * Problem packages:
 *   problem_language = python3    the package format's language this one runs
 *                                 (a [section] of languages/problem/languages.ini,
 *                                 unchecked when the folder has no such file):
 *                                 package programs in it run in this language, and
 *                                 include/<it>/ holds the files added to submissions
 *
 * languages/problem/languages.ini is the package format's own table (Kattis
 * problemtools' config/languages.yaml), one [code] section per language,
 * including the many the judge does not run:
 *   name = Python 3               priority = 850 (ties of detection: higher wins)
 *   files = *.py *.py3            globs of its source files
 *   shebang_files = *.py          files among those that count as evidence for it
 *   shebang = ^#!.*python2\b      only when their first line matches this PCRE2
 *   entry_files = __main__.py     entry point names besides main.* (case-insensitive)
 * A program's language is the one with the most evidence files, ties to the
 * higher priority (problemtools' rule).
 *
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

#include "common/strbuf.h"

/* Where make deps copies languages/drivers, for trees whose own copy a sandbox
 * cannot see (under /tmp or /dev/shm: see lang_load_dir). */
#define LANG_DRIVERS_COPY "/opt/judge/runtimes/drivers"

/* How a function problem's calls reach the user's code (function_harness). */
enum lang_harness {
	LANG_HARNESS_NONE,
	LANG_HARNESS_SCRIPT,
	LANG_HARNESS_STL,
	LANG_HARNESS_CLR,
};

struct lang {
	char *name;
	char **aliases; /* never NULL */
	bool is_default;
	char *display_name;
	char *source_file;
	char **extensions;   /* never NULL; ".py" */
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
	/* the warm compile server (judge/grading/compsrv.h), NULL when none */
	char **compile_server_argv;
	/* the zygote (docs/warm-start.md), NULL when none; ro_paths then holds the
	 * drivers folder too */
	char **zygote_argv;
	char **preload; /* NULL when none */
	/* The session driver: all three NULL when the language has none.
	 * session_ro_paths is ro_paths plus the drivers folder (bind them all). */
	char **session_argv;
	char **session_env;
	char **session_ro_paths;
	/* session packages: all NULL when the language has no package manager */
	char *package_manager;
	char **package_argv;
	char *package_dir;
	/* compile_in_run: the pattern and its compiled form (lang_compile_error_in_run) */
	char *compile_in_run;
	void *compile_in_run_re;
	/* function and test-code problems */
	enum lang_harness function_harness;
	char *function_template, *function_file; /* NULL with LANG_HARNESS_NONE */
	char *testcode_template, *testcode_file; /* NULL: no test-code problems */
	bool harness_compiles;
	char **harness_syntax_errors; /* never NULL */
	/* Judge0 and Piston */
	int *judge0_ids;
	int njudge0_ids;
	char *judge0_name;
	char *piston_language; /* never NULL */
	char *piston_runtime;  /* NULL when Piston lists none */
	char **piston_aliases; /* never NULL */
	bool piston_compiled;
	/* the E2B front (judge/api/e2b_code.h) */
	char **e2b_names; /* never NULL */
	bool e2b_default;
	/* the package format's language code it runs, or NULL */
	char *problem_language;
};

/* A language of the problem package format (languages/problem/languages.ini). */
struct lang_problem {
	char *code;
	char *name;
	long priority;
	char **files;	      /* globs, never NULL */
	char **shebang_files; /* never NULL */
	void *shebang_re;     /* NULL: every file counts */
	char **entry_files;   /* never NULL */
};

/* A Judge0 language id and the language that runs it. */
struct lang_judge0 {
	int id;
	const struct lang *lang;
};

struct lang_registry {
	struct lang *langs; /* sorted by name */
	int count;
	struct lang_problem *problem_langs; /* the format's order */
	int nproblem_langs;
	struct lang_judge0 *judge0; /* sorted by id */
	int njudge0;
};

/* Loads every *.ini under dir, sorted by name, and dir/problem/languages.ini
 * when it exists. Returns 0, or -1 with a message. */
int lang_load_dir(struct lang_registry *reg, const char *dir, char *err, size_t errlen);
/* Returns the language called name, or NULL. */
const struct lang *lang_find(const struct lang_registry *reg, const char *name);
/* Returns the language called name or with name among its aliases, or NULL. */
const struct lang *lang_lookup(const struct lang_registry *reg, const char *name);
/* The language marked default, else the first one; NULL when there is none. */
const struct lang *lang_default(const struct lang_registry *reg);
/* The session language E2B's clients call name (e2b_names), or with name ""
 * the one marked e2b_default; NULL when there is none. */
const struct lang *lang_by_e2b(const struct lang_registry *reg, const char *name);
/* The language that runs Judge0 language id, or NULL. */
const struct lang *lang_by_judge0(const struct lang_registry *reg, long id);
/* The language whose problem_language is code, or NULL. */
const struct lang *lang_by_problem_language(const struct lang_registry *reg, const char *code);
/* The language whose package manager is manager, or NULL. */
const struct lang *lang_by_package_manager(const struct lang_registry *reg, const char *manager);
/* Appends to out the names of the languages keep() is true of (NULL keep:
 * all), as "a, b <conj> c" (conj "and", "or"); "none" when there is none. */
void lang_names(const struct lang_registry *reg, bool (*keep)(const struct lang *),
		const char *conj, struct strbuf *out);
/* The format's language called code, or NULL. */
const struct lang_problem *lang_problem_find(const struct lang_registry *reg, const char *code);
/* True when the first line of a file (line, without its newline) matches pl's
 * shebang; true when pl has none. */
bool lang_problem_shebang(const struct lang_problem *pl, const char *line);
void lang_registry_release(struct lang_registry *reg);
/* The keys of a language file, NULL-terminated (static); for the test that
 * every key is documented above. */
const char *const *lang_keys(void);
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
