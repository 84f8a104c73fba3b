/* test_lang: language files — the shipped ones, bad ones, and version probes. */
#include <criterion/criterion.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/strbuf.h"
#include "judge/grading/lang.h"

static char dir[64] = "/tmp/test_lang.XXXXXX";

static void make_dir(void)
{
	cr_assert_not_null(mkdtemp(dir));
}

/* outside /tmp, which sandboxes' private /tmp would hide (see lang_load_dir) */
static void make_dir_var(void)
{
	snprintf(dir, sizeof dir, "%s", "/var/tmp/test_lang.XXXXXX");
	cr_assert_not_null(mkdtemp(dir));
}

static void remove_dir(void)
{
	char cmd[128];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	cr_assert_eq(system(cmd), 0);
}

static void write_lang(const char *name, const char *text)
{
	char path[256];
	snprintf(path, sizeof path, "%s/%s.ini", dir, name);
	FILE *f = fopen(path, "w");
	cr_assert_not_null(f);
	fputs(text, f);
	fclose(f);
}

static bool has(char **list, const char *s)
{
	for (; list && *list; list++)
		if (!strcmp(*list, s))
			return true;
	return false;
}

static bool has_prefix(char **list, const char *prefix)
{
	for (; list && *list; list++)
		if (!strncmp(*list, prefix, strlen(prefix)))
			return true;
	return false;
}

Test(lang, shipped_files_load)
{
	struct lang_registry reg;
	char err[512] = "";
	cr_assert_eq(lang_load_dir(&reg, "languages", err, sizeof err), 0, "%s", err);
	cr_assert_eq(reg.count, 6);
	const char *order[] = {"bash", "c", "cpp", "csharp", "node", "python"};
	for (int i = 0; i < 6; i++) {
		const struct lang *l = &reg.langs[i];
		cr_assert_str_eq(l->name, order[i]);
		cr_assert(l->display_name && *l->display_name);
		cr_assert(l->run_argv && l->run_argv[0] && l->run_argv[0][0] == '/');
		cr_assert(l->version_argv && l->version_argv[0], "%s has no version probe",
			  l->name);
		cr_assert(has_prefix(l->env, "PATH="), "%s env lacks PATH", l->name);
		cr_assert(has(l->env, "HOME=/tmp"), "%s env lacks HOME=/tmp", l->name);
		cr_assert(has(l->env, "LANG=C.UTF-8"));
		cr_assert_not_null(l->compile_env);
		cr_assert_not_null(l->ro_paths);
		cr_assert(l->install && !access(l->install, R_OK), "%s: install script", l->name);
		char selftest[256];
		snprintf(selftest, sizeof selftest, "languages/selftest/%s%s", l->name,
			 strrchr(l->source_file, '.'));
		cr_assert(!access(selftest, R_OK), "%s is missing", selftest);
	}
	const struct lang *c = lang_find(&reg, "c");
	cr_assert_not_null(c);
	cr_assert_str_eq(c->source_file, "main.c");
	cr_assert(has(c->compile_argv, "main.c"), "{source} was not replaced");
	cr_assert(has(c->compile_argv, "-std=gnu17") && has(c->compile_argv, "-O2"));
	cr_assert(has(c->compile_argv, "-lm"));
	cr_assert(has(lang_find(&reg, "cpp")->compile_argv, "-std=gnu++20"));
	/* {options} marks the place of compiler_options and is not kept */
	cr_assert_not(has(c->compile_argv, "{options}"));
	cr_assert_geq(c->compile_options_at, 0);
	cr_assert_str_eq(c->compile_argv[c->compile_options_at], "main.c",
			 "options go right before the source");
	cr_assert_geq(lang_find(&reg, "cpp")->compile_options_at, 0);
	cr_assert_geq(lang_find(&reg, "csharp")->compile_options_at, 0);
	cr_assert_eq(lang_find(&reg, "python")->compile_options_at, -1);
	const struct lang *py = lang_find(&reg, "python");
	/* python byte-compiles its sources: a syntax error is a compile error */
	cr_assert_not_null(py->compile_argv);
	cr_assert(has(py->compile_argv, "-S") && has(py->compile_argv, "main.py"));
	cr_assert(has(py->env, "PYTHONDONTWRITEBYTECODE=1"));
	cr_assert(has(py->run_argv, "main.py"));
	cr_assert(has(py->ro_paths, "/opt/judge/runtimes/python3.12"));
	const struct lang *cs = lang_find(&reg, "csharp");
	cr_assert_not_null(cs->compile_argv);
	cr_assert(has(cs->env, "DOTNET_CLI_TELEMETRY_OPTOUT=1"));
	cr_assert(has(cs->env, "DOTNET_EnableDiagnostics=0"));
	cr_assert_gt(cs->compile_memory_limit_mb, 256);
	cr_assert(has(lang_find(&reg, "node")->run_argv, "main.js"));
	cr_assert_null(lang_find(&reg, "cobol"));
	lang_registry_release(&reg);
	cr_assert_eq(reg.count, 0);
}

Test(lang, parses_quotes_defaults_and_limits, .init = make_dir, .fini = remove_dir)
{
	write_lang("toy", "# a comment\n"
			  "source_file = prog.toy\n"
			  "compile = /usr/bin/toyc -o 'out file' \"{source}\" x{source}y\n"
			  "run = /box/out\n"
			  "env = A=1 B='two words' C=\n"
			  "ro_paths = /opt/a::/opt/b\n"
			  "time_limit_ms = 1500\n"
			  "compile_processes = 7\n");
	struct lang_registry reg;
	char err[512] = "";
	cr_assert_eq(lang_load_dir(&reg, dir, err, sizeof err), 0, "%s", err);
	const struct lang *l = lang_find(&reg, "toy");
	cr_assert_not_null(l);
	cr_assert_str_eq(l->display_name, "toy", "display name defaults to the name");
	const char *want[] = {"/usr/bin/toyc", "-o", "out file", "prog.toy", "xprog.toyy", NULL};
	for (int i = 0; want[i]; i++)
		cr_assert_str_eq(l->compile_argv[i], want[i]);
	cr_assert_null(l->compile_argv[5]);
	cr_assert_str_eq(l->env[1], "B=two words");
	cr_assert_str_eq(l->env[2], "C=");
	cr_assert_null(l->env[3]);
	cr_assert_str_eq(l->compile_env[1], "B=two words", "compile_env defaults to env");
	cr_assert_str_eq(l->ro_paths[0], "/opt/a");
	cr_assert_str_eq(l->ro_paths[1], "/opt/b");
	cr_assert_null(l->ro_paths[2]);
	cr_assert_eq(l->time_limit_ms, 1500);
	cr_assert_eq(l->memory_limit_mb, 0);
	cr_assert_eq(l->compile_processes, 7);
	cr_assert_null(l->version_argv[0], "no probe: empty argv");
	char ver[128];
	cr_assert_eq(lang_probe_version(l, ver, sizeof ver, 1000), -1);
	lang_registry_release(&reg);
}

Test(lang, warm_up_and_preload, .init = make_dir, .fini = remove_dir)
{
	write_lang("toy", "source_file = a.toy\n"
			  "run = /usr/bin/toy {source}\n"
			  "warm_up = /usr/bin/toy -e '0; 1' {source}\n"
			  "preload = /usr/lib/libtoy.so::/usr/lib/libtoy2.so\n");
	write_lang("bare", "source_file = a\nrun = /box/a\nwarm_up =\n");
	struct lang_registry reg;
	char err[512] = "";
	cr_assert_eq(lang_load_dir(&reg, dir, err, sizeof err), 0, "%s", err);
	const struct lang *l = lang_find(&reg, "toy");
	const char *want[] = {"/usr/bin/toy", "-e", "0; 1", "{source}", NULL};
	for (int i = 0; want[i]; i++)
		cr_assert_str_eq(l->warm_argv[i], want[i]);
	cr_assert_null(l->warm_argv[4], "the warm-up runs before the box: {source} stays");
	cr_assert_str_eq(l->preload[0], "/usr/lib/libtoy.so");
	cr_assert_str_eq(l->preload[1], "/usr/lib/libtoy2.so");
	cr_assert_null(l->preload[2]);
	const struct lang *b = lang_find(&reg, "bare");
	cr_assert_null(b->warm_argv, "an empty warm_up is none");
	cr_assert_null(b->preload);
	lang_registry_release(&reg);

	/* the shipped languages carry what the runner used to know by name */
	cr_assert_eq(lang_load_dir(&reg, "languages", err, sizeof err), 0, "%s", err);
	const struct lang *py = lang_find(&reg, "python");
	cr_assert_str_eq(py->warm_argv[0], py->run_argv[0], "python warms its own interpreter");
	cr_assert(has(py->warm_argv, "pass"));
	const struct lang *node = lang_find(&reg, "node");
	cr_assert_str_eq(node->warm_argv[0], node->run_argv[0]);
	const struct lang *cpp = lang_find(&reg, "cpp");
	cr_assert(has(cpp->preload, "/usr/lib/x86_64-linux-gnu/libstdc++.so.6"));
	cr_assert_not_null(cpp->warm_argv);
	cr_assert_not_null(lang_find(&reg, "c")->warm_argv);
	lang_registry_release(&reg);
}

Test(lang, session_driver, .init = make_dir, .fini = remove_dir)
{
	write_lang("toy", "source_file = a\nrun = /x\nro_paths = /opt/toy\nenv = A=1\n"
			  "session = /opt/toy/bin/toy '{drivers}/toy driver.t' -x\n");
	write_lang("own", "source_file = a\nrun = /x\nenv = A=1\n"
			  "session = {drivers}/own\nsession_env = B=2\n");
	write_lang("none", "source_file = a\nrun = /x\nsession =\n");
	struct lang_registry reg;
	char err[512] = "", drivers[PATH_MAX + 16], real[PATH_MAX];
	cr_assert_eq(lang_load_dir(&reg, dir, err, sizeof err), 0, "%s", err);
	cr_assert_not_null(realpath(dir, real));
	snprintf(drivers, sizeof drivers, "%s/drivers", real);
	/* a folder that sandboxes' private /tmp hides: make deps' copy instead */
	if (!strncmp(real, "/tmp/", 5))
		snprintf(drivers, sizeof drivers, "%s", LANG_DRIVERS_COPY);
	const struct lang *l = lang_find(&reg, "toy");
	char want[PATH_MAX + 64];
	snprintf(want, sizeof want, "%s/toy driver.t", drivers);
	cr_assert_str_eq(l->session_argv[1], want);
	cr_assert_str_eq(l->session_argv[2], "-x");
	cr_assert_null(l->session_argv[3]);
	cr_assert_str_eq(l->session_env[0], "A=1", "session_env defaults to env");
	cr_assert(has(l->session_ro_paths, "/opt/toy") && has(l->session_ro_paths, drivers));
	cr_assert_null(l->ro_paths[1], "runs do not bind the drivers");
	const struct lang *o = lang_find(&reg, "own");
	cr_assert_str_eq(o->session_env[0], "B=2");
	cr_assert_null(o->session_env[1]);
	cr_assert(!strncmp(o->session_argv[0], drivers, strlen(drivers)));
	const struct lang *n = lang_find(&reg, "none");
	cr_assert(!n->session_argv && !n->session_env && !n->session_ro_paths);
	lang_registry_release(&reg);

	/* the shipped drivers exist where the argv says */
	cr_assert_eq(lang_load_dir(&reg, "languages", err, sizeof err), 0, "%s", err);
	const char *with[] = {"python", "bash"};
	for (int i = 0; i < 2; i++) {
		l = lang_find(&reg, with[i]);
		cr_assert(l->session_argv, "%s has no session driver", with[i]);
		const char *script = l->session_argv[0];
		for (char **a = l->session_argv; *a; a++)
			if (strstr(*a, "/drivers/"))
				script = *a;
		cr_assert(!access(script, R_OK), "%s: '%s' is missing", with[i], script);
	}
	cr_assert_null(lang_find(&reg, "c")->session_argv);
	lang_registry_release(&reg);
}

struct bad_case {
	const char *text;
	const char *message;
};

Test(lang, bad_files_are_clear_errors, .init = make_dir, .fini = remove_dir)
{
	const struct bad_case cases[] = {
	    {"source_file = a\nrun = /x\nbogus = 1\n", "unknown key 'bogus'"},
	    {"source_file = a\n", "'run' is required"},
	    {"run = /x\n", "'source_file' is required"},
	    {"name = other\nsource_file = a\nrun = /x\n", "differs from the file name"},
	    {"source_file = a\nrun = x\n", "must start with an absolute path"},
	    {"source_file = a\nrun = /x\ncompile = gcc a\n", "must start with an absolute path"},
	    {"source_file = ../a\nrun = /x\n", "plain file name"},
	    {"source_file = a\nrun = /x\ntime_limit_ms = fast\n", "whole number"},
	    {"source_file = a\nrun = /x\nmemory_limit_mb = -5\n", "whole number"},
	    {"source_file = a\nrun = /x\nprocesses = 99999999\n", "whole number"},
	    {"source_file = a\nrun = /x\nrun = /y\n", "given twice"},
	    {"[lang]\nsource_file = a\nrun = /x\n", "no sections"},
	    {"source_file = a\nrun = /x\nenv = PATH\n", "not NAME=VALUE"},
	    {"source_file = a\nrun = /x\nro_paths = opt\n", "absolute paths"},
	    {"source_file = a\nrun = /x 'open\n", "unterminated quote"},
	    {"source_file = a\nrun =\n", "'run' is empty"},
	    {"name = b c\nsource_file = a\nrun = /x\n", "letters, digits"},
	    {"source_file = a\nrun = /x\nwarm_up = x -c pass\n", "'warm_up' must start"},
	    {"source_file = a\nrun = /x\nwarm_up = '/x\n", "unterminated quote"},
	    {"source_file = a\nrun = /x\npreload = /a:lib.so\n", "'preload' needs absolute"},
	    {"source_file = a\nrun = /x\npreload = /a\npreload = /b\n", "given twice"},
	    {"source_file = a\nrun = /x\nsession = drv.py\n", "must start with an absolute"},
	    {"source_file = a\nrun = /x\nsession = /x 'a\n", "unterminated quote"},
	    {"source_file = a\nrun = /x\nsession_env = A\n", "not NAME=VALUE"},
	    {"source_file = a\nrun = /x\ncompile = /c\ncompile_in_run = (x\n",
	     "'compile_in_run': bad pattern at offset 2"},
	    {"source_file = a\nrun = /x\ncompile_in_run = x\n", "needs a 'compile' step"},
	    {"source_file = a\nrun = /x\naliases = a b/c\n", "'aliases' may hold only"},
	    {"source_file = a\nrun = /x\ndefault = maybe\n", "needs yes or no"},
	    {"source_file = a\nrun = /x\nextensions = py\n", "endings like .py"},
	    {"source_file = a\nrun = /x\npackage_manager = gem\n", "must be pip or npm"},
	    {"source_file = a\nrun = /x\npackage_manager = pip\n", "go together"},
	    {"source_file = a\nrun = /x\npackage_manager = pip\npackage_command = pip\n"
	     "package_dir = p\n",
	     "'package_command' must start with an absolute path"},
	    {"source_file = a\nrun = /x\npackage_manager = pip\npackage_command = /pip\n"
	     "package_dir = ../p\n",
	     "relative path without '..'"},
	    {"source_file = a\nrun = /x\nfunction_harness = lisp\n", "script, stl, clr"},
	    {"source_file = a\nrun = /x\nfunction_harness = script\n", "go together"},
	    {"source_file = a\nrun = /x\nfunction_template = f.x\nfunction_file = s.x\n",
	     "go together"},
	    {"source_file = a\nrun = /x\ntestcode_template = t.x\n", "go together"},
	    {"source_file = a\nrun = /x\ntestcode_file = ../p.x\n", "plain file name"},
	    {"source_file = a\nrun = /x\nharness_compiles = 1\n", "needs yes or no"},
	    {"source_file = a\nrun = /x\njudge0_ids = 71 x\n", "whole number"},
	    {"source_file = a\nrun = /x\njudge0_ids = 0\n", "numbers from 1"},
	    {"source_file = a\nrun = /x\njudge0_ids = 7 7\n", "has 7 twice"},
	    {"source_file = a\nrun = /x\njudge0_name = X\n", "needs 'judge0_ids'"},
	    {"source_file = a\nrun = /x\npiston_compiled = sometimes\n", "needs yes or no"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		write_lang("bad", cases[i].text);
		struct lang_registry reg;
		char err[512] = "";
		cr_assert_eq(lang_load_dir(&reg, dir, err, sizeof err), -1, "case %zu loaded", i);
		cr_assert_not_null(strstr(err, cases[i].message), "case %zu: '%s' lacks '%s'", i,
				   err, cases[i].message);
		cr_assert_not_null(strstr(err, "bad.ini"), "case %zu: no file name in '%s'", i,
				   err);
		cr_assert_eq(reg.count, 0);
		cr_assert_null(reg.langs);
	}
}

/* The shipped python's compile_in_run against what CPython 3.12 prints: a
 * syntax error of the main script is one (no traceback), a SyntaxError
 * raised at run time is not. */
Test(lang, compile_in_run_python)
{
	struct lang_registry reg;
	char err[512] = "";
	cr_assert_eq(lang_load_dir(&reg, "languages", err, sizeof err), 0, "%s", err);
	const struct lang *py = lang_find(&reg, "python");
	cr_assert_not_null(py->compile_in_run);
	const char *yes[] = {
	    "  File \"/box/main.py\", line 1\n    print(\n         ^\nSyntaxError: '(' was "
	    "never closed\n",
	    "  File \"/box/main.py\", line 2\n    print(1)\n    ^\nIndentationError: expected "
	    "an indented block after 'if' statement on line 1\n",
	    "  File \"/box/main.py\", line 3\n    y=2\nTabError: inconsistent use of tabs and "
	    "spaces in indentation\n",
	    "SyntaxError: encoding problem: foo\n",
	    "/box/main.py:1: SyntaxWarning: invalid escape sequence '\\d'\n  x = \"\\d\"\n  File "
	    "\"/box/main.py\", line 2\n    print(\n         ^\nSyntaxError: '(' was never "
	    "closed\n",
	};
	const char *no[] = {
	    "Traceback (most recent call last):\n  File \"/box/main.py\", line 1, in "
	    "<module>\n    raise SyntaxError(\"x\")\nSyntaxError: x\n",
	    "Traceback (most recent call last):\n  File \"/box/main.py\", line 1, in "
	    "<module>\n    exec(\"(\")\n  File \"<string>\", line 1\n    (\n    ^\nSyntaxError: "
	    "'(' was never closed\n",
	    "Traceback (most recent call last):\n  File \"/box/main.py\", line 1, in "
	    "<module>\nZeroDivisionError: division by zero\n",
	    "SyntaxError: x\nmore after it\n",
	    "",
	};
	for (size_t i = 0; i < sizeof yes / sizeof yes[0]; i++)
		cr_assert(lang_compile_error_in_run(py, yes[i], strlen(yes[i])), "%s", yes[i]);
	for (size_t i = 0; i < sizeof no / sizeof no[0]; i++)
		cr_assert(!lang_compile_error_in_run(py, no[i], strlen(no[i])), "%s", no[i]);
	/* a long stderr is never one (the match has a bounded cost) */
	size_t n = LANG_COMPILE_IN_RUN_MAX + 100;
	char *big = malloc(n + 1);
	cr_assert_not_null(big);
	memset(big, 'x', n);
	memcpy(big + n - 16, "\nSyntaxError: x\n", 16);
	big[n] = 0;
	cr_assert(!lang_compile_error_in_run(py, big, n));
	free(big);
	/* the other languages have none */
	const struct lang *c = lang_find(&reg, "c");
	cr_assert_null(c->compile_in_run);
	cr_assert(!lang_compile_error_in_run(c, yes[0], strlen(yes[0])));
	lang_registry_release(&reg);
}

Test(lang, empty_or_missing_folder, .init = make_dir, .fini = remove_dir)
{
	struct lang_registry reg;
	char err[512] = "";
	cr_assert_eq(lang_load_dir(&reg, dir, err, sizeof err), -1);
	cr_assert_not_null(strstr(err, "no language files"), "%s", err);
	cr_assert_eq(lang_load_dir(&reg, "/nonexistent/langs", err, sizeof err), -1);
	cr_assert_not_null(strstr(err, "cannot open"), "%s", err);
}

Test(lang, version_probe_runs_the_real_compiler)
{
	struct lang_registry reg;
	char err[512] = "", ver[256];
	cr_assert_eq(lang_load_dir(&reg, "languages", err, sizeof err), 0, "%s", err);
	cr_assert_eq(lang_probe_version(lang_find(&reg, "c"), ver, sizeof ver, 10000), 0, "%s",
		     ver);
	cr_assert(!strncmp(ver, "gcc", 3), "got '%s'", ver);
	cr_assert_null(strchr(ver, '\n'), "only the first line");
	lang_registry_release(&reg);
}

Test(lang, version_probe_failures, .init = make_dir, .fini = remove_dir)
{
	write_lang("fails",
		   "source_file = a\nrun = /bin/true\nversion = /bin/sh -c 'echo oops; exit 3'\n");
	write_lang("hangs", "source_file = a\nrun = /bin/true\nversion = /bin/sleep 30\n");
	write_lang("missing", "source_file = a\nrun = /bin/true\nversion = /no/such/binary\n");
	write_lang(
	    "stderr",
	    "source_file = a\nrun = /bin/true\nversion = /bin/sh -c 'echo \"  v1.2  \" >&2'\n");
	struct lang_registry reg;
	char err[512] = "", ver[256];
	cr_assert_eq(lang_load_dir(&reg, dir, err, sizeof err), 0, "%s", err);
	cr_assert_eq(lang_probe_version(lang_find(&reg, "fails"), ver, sizeof ver, 5000), -1);
	cr_assert_not_null(strstr(ver, "failed"), "%s", ver);
	struct timespec a, b;
	clock_gettime(CLOCK_MONOTONIC, &a);
	cr_assert_eq(lang_probe_version(lang_find(&reg, "hangs"), ver, sizeof ver, 300), -1);
	clock_gettime(CLOCK_MONOTONIC, &b);
	cr_assert_not_null(strstr(ver, "timed out"), "%s", ver);
	cr_assert_lt(b.tv_sec - a.tv_sec, 5, "the probe did not stop at its timeout");
	cr_assert_eq(lang_probe_version(lang_find(&reg, "missing"), ver, sizeof ver, 5000), -1);
	cr_assert_eq(lang_probe_version(lang_find(&reg, "stderr"), ver, sizeof ver, 5000), 0, "%s",
		     ver);
	cr_assert_str_eq(ver, "v1.2");
	lang_registry_release(&reg);
}

/* The languages folder's own drivers where sandboxes see it; under /tmp, the copy
 * make deps keeps (a CI clone there must still run sessions). */
Test(lang, drivers_folder_by_place, .init = make_dir_var, .fini = remove_dir)
{
	write_lang("toy", "source_file = a\nrun = /x\nsession = {drivers}/d.py\n");
	struct lang_registry reg;
	char err[512] = "", real[PATH_MAX], want[PATH_MAX + 16];
	cr_assert_eq(lang_load_dir(&reg, dir, err, sizeof err), 0, "%s", err);
	cr_assert_not_null(realpath(dir, real));
	snprintf(want, sizeof want, "%s/drivers/d.py", real);
	cr_assert_str_eq(lang_find(&reg, "toy")->session_argv[0], want);
	lang_registry_release(&reg);

	char tmp[] = "/tmp/test_lang.XXXXXX", path[PATH_MAX];
	cr_assert_not_null(mkdtemp(tmp));
	snprintf(path, sizeof path, "%s/toy.ini", tmp);
	FILE *f = fopen(path, "w");
	cr_assert_not_null(f);
	fputs("source_file = a\nrun = /x\nsession = {drivers}/d.py\n", f);
	fclose(f);
	int rc = lang_load_dir(&reg, tmp, err, sizeof err);
	unlink(path);
	rmdir(tmp);
	cr_assert_eq(rc, 0, "%s", err);
	cr_assert_str_eq(lang_find(&reg, "toy")->session_argv[0], LANG_DRIVERS_COPY "/d.py");
	lang_registry_release(&reg);
}

/* Every key a language file may hold is documented at the top of lang.h, the
 * one place the keys are listed (docs and languages/README.md point there). */
Test(lang, every_key_documented)
{
	struct strbuf h = STRBUF_INIT;
	cr_assert_eq(strbuf_read_file(&h, "judge/grading/lang.h", 1 << 20), 0);
	const char *end = strstr(h.buf, "*/");
	cr_assert_not_null(end);
	int n = 0;
	for (const char *const *k = lang_keys(); *k; k++, n++) {
		char want[64];
		snprintf(want, sizeof want, " %s = ", *k);
		const char *at = strstr(h.buf, want);
		cr_expect(at && at < end, "key '%s' is not documented atop lang.h", *k);
	}
	cr_assert_gt(n, 30);
	strbuf_release(&h);
}

/* The new keys of the shipped files: what C knew by name before. */
Test(lang, shipped_roles)
{
	struct lang_registry reg;
	char err[512] = "";
	cr_assert_eq(lang_load_dir(&reg, "languages", err, sizeof err), 0, "%s", err);
	const struct lang *py = lang_find(&reg, "python"), *node = lang_find(&reg, "node");
	cr_assert_eq(lang_lookup(&reg, "python3"), py);
	cr_assert_eq(lang_lookup(&reg, "javascript"), node);
	cr_assert_eq(lang_lookup(&reg, "node"), node);
	cr_assert_null(lang_lookup(&reg, "js"), "a Piston alias is no API alias");
	cr_assert_eq(lang_default(&reg), py);
	cr_assert_eq(lang_by_package_manager(&reg, "pip"), py);
	cr_assert_eq(lang_by_package_manager(&reg, "npm"), node);
	cr_assert_str_eq(py->package_dir, ".packages/python");
	cr_assert_str_eq(py->package_argv[0], py->run_argv[0], "pip runs on python's interpreter");
	cr_assert(!access(node->package_argv[1], R_OK), "npm's CLI: %s", node->package_argv[1]);
	cr_assert_eq(py->function_harness, LANG_HARNESS_SCRIPT);
	cr_assert(py->harness_compiles && !node->harness_compiles);
	cr_assert(has(py->harness_syntax_errors, "IndentationError"));
	cr_assert_eq(lang_find(&reg, "cpp")->function_harness, LANG_HARNESS_STL);
	cr_assert_eq(lang_find(&reg, "csharp")->function_harness, LANG_HARNESS_CLR);
	cr_assert_eq(lang_find(&reg, "c")->function_harness, LANG_HARNESS_NONE);
	cr_assert_null(lang_find(&reg, "cpp")->testcode_template);
	for (int i = 0; i < reg.count; i++) {
		const struct lang *l = &reg.langs[i];
		char path[256];
		const char *tmpl[] = {l->function_template, l->testcode_template};
		for (int t = 0; t < 2; t++) {
			if (!tmpl[t])
				continue;
			snprintf(path, sizeof path, "languages/harness/%s", tmpl[t]);
			cr_expect(!access(path, R_OK), "%s: %s is missing", l->name, path);
		}
	}
	/* Piston: as its public runtimes listed them */
	cr_assert_str_eq(node->piston_language, "javascript");
	cr_assert_str_eq(node->piston_runtime, "node");
	cr_assert_str_eq(lang_find(&reg, "cpp")->piston_language, "c++");
	cr_assert_str_eq(py->piston_language, "python");
	cr_assert_null(py->piston_runtime);
	cr_assert(!py->piston_compiled && lang_find(&reg, "c")->piston_compiled);
	cr_assert(!lang_find(&reg, "bash")->piston_compiled, "no compile: no stage");
	cr_assert(has(lang_find(&reg, "csharp")->piston_aliases, "c#"));
	/* problem packages */
	cr_assert_str_eq(py->problem_language, "python3");
	/* DOMjudge's shell submissions (languages/problem/languages.ini [bash]) */
	cr_assert_str_eq(lang_find(&reg, "bash")->problem_language, "bash");
	cr_assert_null(lang_by_problem_language(&reg, "java"),
		       "a language of the format none of ours runs");
	const struct lang_problem *p2 = lang_problem_find(&reg, "python2");
	cr_assert(lang_problem_shebang(p2, "#!/usr/bin/env python2"));
	cr_assert_not(lang_problem_shebang(p2, "#!/usr/bin/env python3"));
	cr_assert(lang_problem_shebang(lang_problem_find(&reg, "c"), "anything"), "no rule");
	struct strbuf names = STRBUF_INIT;
	lang_names(&reg, NULL, "or", &names);
	cr_assert_str_eq(names.buf, "bash, c, cpp, csharp, node or python");
	strbuf_release(&names);
	lang_registry_release(&reg);
}

/* What two files would share, and the package format's table, are errors of
 * the folder. */
Test(lang, registry_conflicts, .init = make_dir, .fini = remove_dir)
{
	const struct {
		const char *a, *b, *message;
	} cases[] = {
	    {"aliases = x\n", "aliases = x\n", "alias 'x' is also"},
	    {"aliases = b\n", "", "alias 'b' is also b's name"},
	    {"default = yes\n", "default = yes\n", "both a and b say 'default = yes'"},
	    {"judge0_ids = 5 6\n", "judge0_ids = 6\n", "both have judge0 id 6"},
	    {"package_manager = pip\npackage_command = /p\npackage_dir = p\n",
	     "package_manager = pip\npackage_command = /p\npackage_dir = q\n",
	     "both have package_manager pip"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		char text[512];
		snprintf(text, sizeof text, "source_file = a\nrun = /x\n%s", cases[i].a);
		write_lang("a", text);
		snprintf(text, sizeof text, "source_file = a\nrun = /x\n%s", cases[i].b);
		write_lang("b", text);
		struct lang_registry reg;
		char err[512] = "";
		cr_assert_eq(lang_load_dir(&reg, dir, err, sizeof err), -1, "case %zu loaded", i);
		cr_expect(strstr(err, cases[i].message), "case %zu: '%s' lacks '%s'", i, err,
			  cases[i].message);
		cr_assert_eq(reg.count, 0);
	}
	/* without the format's table, problem_language is not checked */
	struct lang_registry reg;
	char err[512] = "";
	write_lang("a", "source_file = a\nrun = /x\nproblem_language = zz\n");
	write_lang("b", "source_file = a\nrun = /x\n");
	cr_assert_eq(lang_load_dir(&reg, dir, err, sizeof err), 0, "%s", err);
	cr_assert_eq(reg.nproblem_langs, 0);
	lang_registry_release(&reg);
	/* a problem_language of the folder's own table */
	char path[256];
	snprintf(path, sizeof path, "%s/problem", dir);
	cr_assert_eq(mkdir(path, 0755), 0);
	snprintf(path, sizeof path, "%s/problem/languages.ini", dir);
	FILE *f = fopen(path, "w");
	fputs("[zz]\npriority = 5\nfiles = *.zz *.z\n[yy]\nfiles = *.z\nshebang_files = *.z\n"
	      "shebang = ^#!.*yy\n",
	      f);
	fclose(f);
	write_lang("a", "source_file = a.zz\nrun = /x\nproblem_language = zz\n");
	write_lang("b", "source_file = b\nrun = /x\n");
	cr_assert_eq(lang_load_dir(&reg, dir, err, sizeof err), 0, "%s", err);
	cr_assert_eq(reg.nproblem_langs, 2);
	lang_registry_release(&reg);
	write_lang("b", "source_file = b\nrun = /x\nproblem_language = xx\n");
	cr_assert_eq(lang_load_dir(&reg, dir, err, sizeof err), -1);
	cr_expect(strstr(err, "b's problem_language 'xx' is not a section"), "%s", err);
	write_lang("b", "source_file = b\nrun = /x\n");
	cr_assert_eq(lang_load_dir(&reg, dir, err, sizeof err), 0, "%s", err);
	cr_assert_str_eq(lang_by_problem_language(&reg, "zz")->name, "a");
	cr_assert_str_eq(lang_problem_find(&reg, "yy")->name, "yy", "name defaults to the code");
	cr_assert(has(lang_find(&reg, "a")->extensions, ".zz"), "extensions default");
	cr_assert_eq(lang_find(&reg, "b")->extensions[0], NULL, "no ending: no extensions");
	lang_registry_release(&reg);
	/* and its own errors */
	const char *bad[][2] = {
	    {"priority = 5\n", "outside a [language] section"},
	    {"[q]\npriority = 5\n", "has no 'files'"},
	    {"[q]\nfiles = *.q\nshebang = x\n", "go together"},
	    {"[q]\nfiles = *.q\nshebang_files = *.q\nshebang = (\n", "bad pattern"},
	    {"[q]\nfiles = *.q\nbogus = 1\n", "unknown key 'bogus'"},
	    {"[q]\nfiles = *.q\n[q]\nfiles = *.r\n", "given twice"},
	};
	write_lang("a", "source_file = a\nrun = /x\n");
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		f = fopen(path, "w");
		fputs(bad[i][0], f);
		fclose(f);
		cr_assert_eq(lang_load_dir(&reg, dir, err, sizeof err), -1, "table %zu loaded", i);
		cr_expect(strstr(err, bad[i][1]), "table %zu: '%s' lacks '%s'", i, err, bad[i][1]);
	}
	unlink(path);
}
