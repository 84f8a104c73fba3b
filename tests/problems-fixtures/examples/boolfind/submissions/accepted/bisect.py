n = int(input())
lo, hi = 0, n  # the answer lies in [lo, hi]
while lo < hi:
    mid = (lo + hi) // 2
    print("READ", mid, flush=True)
    if input().strip() == "true":
        hi = mid
    else:
        lo = mid + 1
print("OUTPUT", lo, flush=True)
