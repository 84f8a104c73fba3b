# Reads one guess from the submission and tells whether it is the number of the
# input; the submission may be gone by the time the reply is written.
import os
import sys

secret = sys.stdin.readline().strip()
want = open(sys.argv[1]).read().strip()
try:
    print("correct" if secret == want else "wrong", flush=True)
except BrokenPipeError:
    os.dup2(os.open(os.devnull, os.O_WRONLY), 1)
sys.exit(42 if secret == want else 43)
