/* zcore: a zygote's serving loop in C (zcore.c). */
#pragma once

/* What zc_serve returns in a forked child: the run's argv (NULL-terminated) and
 * box_init's error pipe (closing it says "exec'd"; -1 natively). */
struct zc_child {
	char **argv;
	int errfd;
};

/* Says 'R' on fd 3, then serves jobs; returns 0 only in a forked child that has
 * entered its run, -1 when it cannot start. exe: the runtime's path, which a
 * job's argv[0] must be; script: the script its children will run (a job's
 * argv[1], absolute or relative to /box, must name it), or NULL for any.
 * before_fork runs in the zygote before each fork. */
int zc_serve(const char *exe, const char *script, void (*before_fork)(void), struct zc_child *out);
