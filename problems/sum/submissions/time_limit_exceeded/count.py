# counts up to the answer one by one: fine for the samples, hopeless for 10^18
a, b = map(int, input().split())
s, step = a, (1 if b > 0 else -1)
for _ in range(abs(b)):
    s += step
print(s)
