"""pty_up.py: runs a command in a pseudo-terminal of its own, as a person at a
terminal does, and presses Ctrl-C when told to.

usage: pty_up.py LOG -- COMMAND ARGS...

The command is the foreground process group of a new terminal session, so a
Ctrl-C (the byte 0x03 typed on the terminal) reaches every process of that
group as SIGINT, exactly as in `make run`. Everything the command prints goes
to LOG. Commands come on stdin, one a line:
  wait TEXT      until TEXT shows in the output (120 s at most; exit 3 if not)
  ctrl-c         type Ctrl-C
  sleep SECONDS  keep reading the output meanwhile
  exit           wait for the command's end; print "exit CODE SECONDS" (the
                 time since the last ctrl-c) and stop
"""
import os
import pty
import select
import sys
import time

log_path = sys.argv[1]
cmd = sys.argv[sys.argv.index("--") + 1:]
pid, fd = pty.fork()
if pid == 0:
    os.execvp(cmd[0], cmd)
log = open(log_path, "ab")
seen = b""
alive = True


def pump(seconds):
    """Copies the terminal's output to the log for up to seconds; False at its end."""
    global seen, alive
    end = time.monotonic() + seconds
    while alive and time.monotonic() < end:
        r, _, _ = select.select([fd], [], [], 0.05)
        if not r:
            continue
        try:
            data = os.read(fd, 65536)
        except OSError:
            data = b""
        if not data:
            alive = False
            break
        seen += data
        log.write(data)
        log.flush()
    return alive


last_ctrl_c = time.monotonic()
for line in sys.stdin:
    word, _, arg = line.strip().partition(" ")
    if word == "wait":
        end = time.monotonic() + 120
        while arg.encode() not in seen and time.monotonic() < end and pump(0.2):
            pass
        if arg.encode() not in seen:
            print("timeout waiting for %r" % arg, flush=True)
            sys.exit(3)
        print("seen", flush=True)
    elif word == "ctrl-c":
        os.write(fd, b"\x03")
        last_ctrl_c = time.monotonic()
        print("sent", flush=True)
    elif word == "sleep":
        pump(float(arg))
        print("slept", flush=True)
    elif word == "exit":
        while pump(0.5):
            pass
        _, status = os.waitpid(pid, 0)
        print("exit %d %.1f" % (os.waitstatus_to_exitcode(status), time.monotonic() - last_ctrl_c),
              flush=True)
        break
