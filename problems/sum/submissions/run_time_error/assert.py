a, b = map(int, input().split())
assert abs(a) < 2**31 and abs(b) < 2**31, "values out of 32-bit range"
print(a + b)
