import sys

n = int(sys.stdin.readline())
total = 0
for i in range(n):
    total += i * i % 7
print(total)
