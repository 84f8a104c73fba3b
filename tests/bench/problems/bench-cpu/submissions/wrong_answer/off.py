import sys

n = int(sys.stdin.readline())
total = 0
for i in range(1, n + 1):
    total += i * i % 7
print(total)
