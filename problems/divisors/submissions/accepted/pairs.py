import sys
n = int(sys.stdin.readline())
out = []
i = 1
while i * i <= n:
    if n % i == 0:
        out.append(i)
        if i != n // i:
            out.append(n // i)
    i += 1
print("\n".join(map(str, out)))
