# Tries 1, 2, 3, ...: more than 10 guesses for most numbers.
n = 1
while True:
    print(n, flush=True)
    if input().strip() == "correct":
        break
    n += 1
