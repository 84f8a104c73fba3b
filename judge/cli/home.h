/* home: where the judge binary finds its config and, for the path keys no file
 * sets, its languages, problems and state: its own checkout when it is not
 * installed (bin/judge with languages/ beside bin/), else make install's
 * folders (SYSCONFDIR, DATADIR, STATEDIR, compiled in). */
#pragma once

struct judge_config;

/* The installed config's path (SYSCONFDIR/judge/judge.ini). */
const char *home_installed_config(void);
/* The config to read when no --config names one: ./judge.ini when there is
 * one; else, for an installed binary, the installed config when it exists;
 * else "judge.ini" (missing: the defaults apply). A checkout's binary never
 * reads the installed config. */
const char *home_default_config(void);
/* After config_load: the path keys still relative (defaults no file or
 * override set) made absolute: against the binary's checkout, or for an
 * installed binary against make install's folders (the others against the
 * working folder). */
void home_place_defaults(struct judge_config *cfg);
