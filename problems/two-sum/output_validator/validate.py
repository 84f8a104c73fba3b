#!/usr/bin/env python3
"""Two Sum output validator: accepts any two distinct indices whose values add up to t.

ICPC contract: validate.py input answer feedback_dir < team_output; exit 42 = AC, 43 = WA.
"""
import sys


def judge(ok, message=""):
    if message:
        with open(sys.argv[3] + "judgemessage.txt", "w") as f:
            f.write(message + "\n")
    sys.exit(42 if ok else 43)


def main():
    with open(sys.argv[1]) as f:
        data = f.read().split()
    n, t = int(data[0]), int(data[1])
    a = [int(x) for x in data[2:2 + n]]
    got = sys.stdin.read().split()
    if len(got) != 2:
        judge(False, "expected two indices, got %d tokens" % len(got))
    try:
        i, j = int(got[0]), int(got[1])
    except ValueError:
        judge(False, "indices must be integers, got %r %r" % (got[0][:20], got[1][:20]))
    if not (0 <= i < n and 0 <= j < n):
        judge(False, "index out of range 0..%d: %d %d" % (n - 1, i, j))
    if i == j:
        judge(False, "the two indices must differ, got %d twice" % i)
    if a[i] + a[j] != t:
        judge(False, "a[%d] + a[%d] = %d, not %d" % (i, j, a[i] + a[j], t))
    judge(True)


main()
