/* test_sessproc: the pure parts of a session's processes (judge/service/session/
 * sessproc.c): a process's environment (the worker's base, then the call's,
 * later names replacing earlier ones) and its stream's name. */
#include <criterion/criterion.h>
#include <string.h>

#include "common/xalloc.h"
#include "judge/service/session/sessproc.h"

Test(sessproc, environment)
{
	const char *base[] = {"PATH=/usr/bin:/bin", "HOME=/box", "LANG=C.UTF-8", NULL};
	const char *mine[] = {"FOO=bar", "PATH=/opt/x", "FOO=baz", "EMPTY=", NULL};
	char **env = sessproc_env(base, mine);
	const char *want[] = {"PATH=/opt/x", "HOME=/box", "LANG=C.UTF-8",
			      "FOO=baz",     "EMPTY=",	  NULL};
	for (int i = 0; want[i]; i++)
		cr_assert(env[i] && !strcmp(env[i], want[i]), "[%d] %s, want %s", i, env[i],
			  want[i]);
	cr_assert_null(env[5]);
	xstrvfree(env);
	env = sessproc_env(base, NULL);
	cr_assert_str_eq(env[2], "LANG=C.UTF-8");
	cr_assert_null(env[3]);
	xstrvfree(env);
	/* a name is matched whole: PATH2 is not PATH */
	const char *other[] = {"PATH2=x", NULL};
	env = sessproc_env(base, other);
	cr_assert_str_eq(env[0], "PATH=/usr/bin:/bin");
	cr_assert_str_eq(env[3], "PATH2=x");
	xstrvfree(env);
}

Test(sessproc, stream_names)
{
	char s[128];
	sessproc_stream("0d9d6129-0b90-4c99-b0fd-dec24de0c3c1", 12, s, sizeof s);
	cr_assert_str_eq(s, "proc:0d9d6129-0b90-4c99-b0fd-dec24de0c3c1:12");
}
