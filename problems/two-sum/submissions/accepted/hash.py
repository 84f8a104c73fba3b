import sys

data = sys.stdin.buffer.read().split()
n, t = int(data[0]), int(data[1])
seen = {}
for j in range(n):
    x = int(data[2 + j])
    i = seen.get(t - x)
    if i is not None:
        print(i, j)
        break
    seen.setdefault(x, j)
