/* sessd_proto: the wire between a session's host side (runner/session/session.c)
 * and sessd, the program of a session's sandbox (sessd.c).
 *
 * Both ways a stream of frames:
 *     <op> ' ' <id> ' ' <len> '\n' <len bytes>
 * op one character, id and len decimal (len at most SESSD_MAX_FRAME). id names
 * one child of sessd (a code context's driver or a process), chosen by the
 * host, never reused in a session; 0 is sessd itself.
 *
 * Host -> sessd, on sessd's stdin:
 *   S  spawn child id: payload "<flags>\0<cwd>\0<timeout_ms>\0<argc>\0" then
 *      argc strings, then the environment, each NUL-terminated. flags: 'i' =
 *      its stdin is a pipe (fed with I, closed with C), else /dev/null. cwd is
 *      absolute. argv[0] without '/' is looked up in the child's PATH. The
 *      child gets a process group of its own; timeout_ms > 0 is its lifetime
 *      (SIGKILL to its group after it).
 *   I  bytes for the child's stdin (sessd keeps what the child has not read).
 *   C  close the child's stdin once what it was given is written.
 *   K  payload: a signal number, sent to the child's process group; SIGKILL
 *      then sweeps the group until none of it is left (also when a child ends
 *      by SIGKILL, from anyone: what it started goes with it).
 *   M  mute: the child's further output is read and dropped.
 *   B  a cell of the child (a driver) begins now: marks the time.
 *   W  sweep: SIGKILL to every process of the child's group but the child
 *      that started since its mark (what an interrupted cell left running).
 *   Q  quit: kill every child's group, exit.
 * sessd -> host, on sessd's stdout (its stderr: its own complaints only):
 *   R  ready (id 0): payload "sessd <SESSD_VERSION>"
 *   P  child started: payload its pid (as seen inside)
 *   F  spawn failed: payload "<errno> <what>"
 *   O  the child's stdout bytes, E its stderr bytes (per child, the order of
 *      the bytes is kept; of one child, what it wrote to stderr before it wrote
 *      to stdout comes first)
 *   D  the child's stdin is drained: all it was given is written
 *   X  the child ended (reaped; its output before that all sent): payload
 *      "<wait status> <cpu_us> <maxrss_kb> <killed at its lifetime 0|1>"
 * EOF on sessd's stdin is Q.
 */
#pragma once

#define SESSD_VERSION	   2
#define SESSD_MAX_FRAME	   (64u << 20)
#define SESSD_MAX_HEAD	   48 /* "<op> <id> <len>\n" */
#define SESSD_MAX_CHILDREN 64 /* contexts and processes at once */

enum {
	SESSD_SPAWN = 'S',
	SESSD_INPUT = 'I',
	SESSD_CLOSE = 'C',
	SESSD_KILL = 'K',
	SESSD_MUTE = 'M',
	SESSD_MARK = 'B',
	SESSD_SWEEP = 'W',
	SESSD_QUIT = 'Q',
	SESSD_READY = 'R',
	SESSD_STARTED = 'P',
	SESSD_FAILED = 'F',
	SESSD_STDOUT = 'O',
	SESSD_STDERR = 'E',
	SESSD_DRAINED = 'D',
	SESSD_EXITED = 'X',
};
