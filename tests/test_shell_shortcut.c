/* test_shell_shortcut: sessd's shortcut past bash (runner/session/init/
 * shell_shortcut.h). What it starts sees what the same command under the real
 * `bash -l -c` sees — the same output and exit code, the same environment
 * (sorted: only its order may differ) — and every command it cannot be sure
 * of is left to bash. */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "runner/session/init/shell_shortcut.h"

static char home[64], cwd[64];
static char *env_base[8];
static char env_path[] = "PATH=/usr/local/bin:/usr/bin:/bin";
static char env_home[128];
static char env_lang[] = "LANG=C.UTF-8";

static void setup(void)
{
	snprintf(home, sizeof home, "/tmp/shortcut-home-%d", (int)getpid());
	snprintf(cwd, sizeof cwd, "/tmp/shortcut-cwd-%d", (int)getpid());
	cr_assert(mkdir(home, 0755) == 0 && mkdir(cwd, 0755) == 0);
	snprintf(env_home, sizeof env_home, "HOME=%s", home);
	env_base[0] = env_path;
	env_base[1] = env_home;
	env_base[2] = env_lang;
	env_base[3] = NULL;
}

static void teardown(void)
{
	char cmd[200];
	snprintf(cmd, sizeof cmd, "rm -rf %s %s", home, cwd);
	cr_assert(system(cmd) == 0);
}

TestSuite(shell_shortcut, .init = setup, .fini = teardown);

/* Runs path with argv and env in cwd; its stdout (sorted lines when sorted)
 * and exit code. */
static char *run(const char *path, char *const *argv, char *const *env, bool sorted, int *code)
{
	int p[2];
	cr_assert(pipe(p) == 0);
	pid_t pid = fork();
	cr_assert(pid >= 0);
	if (pid == 0) {
		dup2(p[1], 1);
		close(p[0]);
		close(p[1]);
		if (chdir(cwd) < 0)
			_exit(120);
		execve(path, argv, env);
		_exit(121);
	}
	close(p[1]);
	static char buf[3][65536];
	static int slot;
	char *out = buf[slot++ % 3];
	size_t n = 0;
	ssize_t r;
	while ((r = read(p[0], out + n, sizeof buf[0] - 1 - n)) > 0)
		n += (size_t)r;
	out[n] = 0;
	close(p[0]);
	int st;
	waitpid(pid, &st, 0);
	*code = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
	if (sorted) {
		char tmp[] = "/tmp/shortcut-sort-XXXXXX";
		int fd = mkstemp(tmp);
		cr_assert(fd >= 0 && write(fd, out, n) == (ssize_t)n);
		close(fd);
		char cmd[128];
		snprintf(cmd, sizeof cmd, "LC_ALL=C sort %s", tmp);
		FILE *f = popen(cmd, "r");
		n = fread(out, 1, sizeof buf[0] - 1, f);
		out[n] = 0;
		pclose(f);
		unlink(tmp);
	}
	return out;
}

/* The command through the shortcut and through bash -c: the same. (A login
 * shell, bash -l -c, reads this machine's /etc/profile, so it is not the
 * shortcut's; the sandboxes have none: tests/integration/sessions_proc.sh
 * compares it there.) */
static void same_as_bash(const char *cmd, char *const *env, bool sorted)
{
	char *argv[] = {"/bin/bash", "-c", (char *)cmd, NULL};
	struct shell_shortcut s;
	cr_assert_eq(shell_shortcut(argv, env, cwd, &s), 1, "'%s' takes the shortcut", cmd);
	int c1, c2;
	char *mine = run(s.path, s.argv, s.env, sorted, &c1);
	char *theirs = run("/bin/bash", argv, env, sorted, &c2);
	cr_expect_str_eq(mine, theirs, "'%s': the output differs", cmd);
	cr_expect_eq(c1, c2, "'%s': exit %d, bash's %d", cmd, c1, c2);
	shell_shortcut_release(&s);
}

Test(shell_shortcut, simple_commands_behave_as_under_bash)
{
	same_as_bash("true", env_base, false);
	same_as_bash("false", env_base, false);
	same_as_bash("env", env_base, true);
	same_as_bash("  echo  hello\tworld  ", env_base, false);
	same_as_bash("printenv PWD SHLVL _ HOME", env_base, false);
	same_as_bash("/usr/bin/env", env_base, true);
	same_as_bash("ls -a /", env_base, false);
	same_as_bash("expr 6 + 7", env_base, false);
	same_as_bash("sh -c exit", env_base, false);
}

Test(shell_shortcut, the_variables_bash_sets)
{
	char lvl[] = "SHLVL=3", bad[] = "SHLVL=abc", pwd[80];
	snprintf(pwd, sizeof pwd, "PWD=%s", cwd);
	char *with_level[] = {env_path, env_home, lvl, NULL};
	char *with_bad_level[] = {env_path, env_home, bad, NULL};
	char *with_pwd[] = {env_path, env_home, pwd, NULL};
	same_as_bash("env", with_level, true);
	same_as_bash("env", with_bad_level, true);
	same_as_bash("env", with_pwd, true);
	struct shell_shortcut s;
	char *argv[] = {"bash", "-c", "env", NULL};
	cr_assert_eq(shell_shortcut(argv, with_level, cwd, &s), 1);
	bool level = false, under = false;
	for (char **e = s.env; *e; e++) {
		level |= !strcmp(*e, "SHLVL=3");
		under |= !strncmp(*e, "_=/", 3) && strstr(*e, "/env");
	}
	cr_expect(level && under, "SHLVL and _ as bash sets them");
	shell_shortcut_release(&s);
}

/* 0: bash runs it. */
static void needs_bash(char *const *argv, char *const *env, const char *why)
{
	struct shell_shortcut s;
	cr_expect_eq(shell_shortcut(argv, env, cwd, &s), 0, "%s", why);
}

static void cmd_needs_bash(const char *cmd)
{
	char *argv[] = {"/bin/bash", "-l", "-c", (char *)cmd, NULL};
	needs_bash(argv, env_base, cmd);
}

Test(shell_shortcut, what_only_bash_can_do_is_left_to_it)
{
	static const char *const cmds[] = {
	    "echo $HOME",
	    "echo 'a b'",
	    "echo \"a\"",
	    "ls *",
	    "ls ~",
	    "true; false",
	    "true && false",
	    "true | cat",
	    "echo a > f",
	    "cat < f",
	    "sleep 1 &",
	    "A=1 env",
	    "cd /tmp",
	    "export A=1",
	    "exit 3",
	    "kill 1",
	    "echo -n x",
	    "echo --help",
	    "printf x",
	    "pwd",
	    "(true)",
	    "{ true; }",
	    "if true",
	    "echo a\\ b",
	    "true # x",
	    "echo `id`",
	    "echo $(id)",
	    "echo a\nb",
	    "",
	    "   ",
	    "no-such-program-here",
	    "./not-there",
	    "/usr",
	    "%1",
	    "-x",
	    "echo {a,b}",
	    "ls [a]",
	    "ls ?",
	    "!true",
	    "time true",
	    "source x",
	    ". x",
	    "[ 1 ]",
	    "type ls",
	    "command ls",
	};
	for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++)
		cmd_needs_bash(cmds[i]);
}

Test(shell_shortcut, what_changes_how_bash_starts_is_left_to_it)
{
	char *argv_l[] = {"/bin/bash", "-l", "-c", "true", NULL};
	char *argv_c[] = {"/bin/bash", "-c", "true", NULL};
	static char *const extras[] = {"BASH_ENV=/tmp/x",   "ENV=/tmp/x",
				       "SHELLOPTS=xtrace",  "BASHOPTS=extglob",
				       "POSIXLY_CORRECT=1", "IFS=x",
				       "OLDPWD=/",	    "BASH_FUNC_true%%=() { :; }",
				       "SHLVL=1000",	    "PWD=/somewhere/else"};
	for (size_t i = 0; i < sizeof extras / sizeof extras[0]; i++) {
		char *env[] = {env_path, env_home, extras[i], NULL};
		needs_bash(argv_l, env, extras[i]);
	}
	char empty_dir[] = "PATH=:/usr/bin", relative[] = "PATH=bin:/usr/bin";
	char *env1[] = {empty_dir, env_home, NULL}, *env2[] = {relative, env_home, NULL},
	     *env3[] = {env_home, NULL}, *env4[] = {env_path, NULL};
	needs_bash(argv_c, env1, "an empty PATH entry (the cwd to bash)");
	needs_bash(argv_c, env2, "a relative PATH entry");
	needs_bash(argv_c, env3, "no PATH");
	needs_bash(argv_l, env4, "a login shell with no HOME");
	if (access("/etc/profile", F_OK) == 0)
		needs_bash(argv_l, env_base, "a login shell where /etc/profile is");
	/* a login shell reads the home's startup files; bash -c does not */
	char f[128];
	snprintf(f, sizeof f, "%s/.profile", home);
	int fd = open(f, O_CREAT | O_WRONLY, 0644);
	cr_assert(fd >= 0);
	close(fd);
	needs_bash(argv_l, env_base, "~/.profile, read by a login shell");
	struct shell_shortcut s;
	cr_expect_eq(shell_shortcut(argv_c, env_base, cwd, &s), 1, "bash -c reads no ~/.profile");
	shell_shortcut_release(&s);
}

Test(shell_shortcut, only_bash_dash_c_with_one_command)
{
	char *forms[][6] = {
	    {"/bin/sh", "-c", "true", NULL},	     {"/bin/bash", "-c", "true", "name", NULL},
	    {"/bin/bash", "-x", "-c", "true", NULL}, {"/bin/bash", "-lc", "true", NULL},
	    {"/bin/bash", "script.sh", NULL},	     {"/bin/bash", NULL},
	};
	for (size_t i = 0; i < sizeof forms / sizeof forms[0]; i++)
		needs_bash(forms[i], env_base, forms[i][1] ? forms[i][1] : "bare bash");
	char *rel[] = {"/bin/bash", "-c", "true", NULL};
	struct shell_shortcut s;
	cr_expect_eq(shell_shortcut(rel, env_base, "relative/dir", &s), 0, "a relative cwd");
}
