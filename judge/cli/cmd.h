/* cmd: the subcommands of the judge binary; each returns the process exit code
 * (0 ok, 1 failure, 2 usage error). argv[0] is the subcommand name. */
#pragma once

struct judge_config;

int cmd_run(int argc, char **argv, struct judge_config *cfg);
int cmd_languages(int argc, char **argv, struct judge_config *cfg);
int cmd_selftest(int argc, char **argv, struct judge_config *cfg);
int cmd_serve(int argc, char **argv, struct judge_config *cfg);
int cmd_keys(int argc, char **argv, struct judge_config *cfg);
int cmd_migrate(int argc, char **argv, struct judge_config *cfg);
int cmd_worker(int argc, char **argv, struct judge_config *cfg);
int cmd_verify(int argc, char **argv, struct judge_config *cfg);
int cmd_up(int argc, char **argv, struct judge_config *cfg);
int cmd_mcp(int argc, char **argv, struct judge_config *cfg);
int cmd_eval(int argc, char **argv, struct judge_config *cfg);
int cmd_problems(int argc, char **argv, struct judge_config *cfg);
