/* slots: machine-wide sandbox slot numbers, held by flock while a process lives.
 *
 * A slot number picks host uids and cgroup names in the sandbox (runner/), so
 * it must be unique on the machine, also across worker processes: the holder
 * keeps an flock on <box_root>-slots/N; a killed process's locks go with it.
 * Grading slots and session sandboxes take their numbers here alike.
 */
#pragma once

#define SLOT_LOCKS_MAX 4096

/* Takes the lowest free slot number. Returns it with *fd (close it to give the
 * number back), or -1 (logged). */
int slot_take(const char *box_root, int *fd);
