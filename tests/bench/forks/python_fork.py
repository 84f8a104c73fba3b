"""python_fork.py N MODE: a Python with the zygote's modules forking N children
(tests/bench/forks.sh, run inside gVisor): MODE exit, each child _exits at once
(the fork's own cost); MODE hello, each compiles and runs print('hello') first."""
import gc
import os
import sys

for name in ("json traceback collections functools heapq bisect math re string typing "
             "operator copy ctypes socket resource struct signal atexit io").split():
    __import__(name)
gc.freeze()
n, mode = int(sys.argv[1]), sys.argv[2]
for _ in range(n):
    pid = os.fork()
    if pid == 0:
        if mode == "hello":
            exec(compile("print('hello')\n", "/tmp/main.py", "exec"), {"__name__": "__main__"})
            sys.stdout.flush()
        os._exit(0)
    os.waitpid(pid, 0)
