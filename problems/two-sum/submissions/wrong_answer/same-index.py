# the classic slip: the table holds every value first, so a value can pair with itself
import sys

data = sys.stdin.read().split()
n, t = int(data[0]), int(data[1])
a = list(map(int, data[2:2 + n]))
where = {x: i for i, x in enumerate(a)}
for i, x in enumerate(a):
    if t - x in where:
        print(i, where[t - x])
        break
