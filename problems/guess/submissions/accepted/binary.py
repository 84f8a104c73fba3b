lo, hi = 1, 1000
while True:
    mid = (lo + hi) // 2
    print(mid, flush=True)
    reply = input().strip()
    if reply == "correct":
        break
    if reply == "lower":
        hi = mid - 1
    else:
        lo = mid + 1
