/* slots: machine-wide sandbox slot numbers, held by flock while a process lives.
 *
 * A slot number picks host uids and cgroup names in the sandbox (runner/), so
 * it must be unique on the machine, also across worker processes: the holder
 * keeps an flock on <box_root>-slots/N; a killed process's locks go with it.
 * Grading slots and session sandboxes take their numbers here alike.
 */
#pragma once

/* Three ranges that never meet, so a session's sandbox never runs under a
 * uid a grading run or a one-shot command uses (docs/security.md):
 * - [0, SLOT_CLI_END): one-shot commands (judge run, eval, verify), which
 *   number their sandboxes 0..jobs-1 without locks;
 * - [SLOT_CLI_END, SLOT_GRADE_END): a worker's grading slots;
 * - [SLOT_GRADE_END, SLOT_LOCKS_MAX): sessions (and the runner's session
 *   pool has 65000.. of its own, runner/session_pool.c). */
#define SLOT_CLI_END   1024
#define SLOT_GRADE_END 5120
#define SLOT_LOCKS_MAX 8192

enum slot_kind { SLOT_GRADE, SLOT_SESSION };

/* Takes the lowest free slot number of kind's range. Returns it with *fd
 * (close it to give the number back), or -1 (logged). */
int slots_take(const char *box_root, enum slot_kind kind, int *fd);
