# Reads the array from the start: far more than 40 questions on big arrays.
n = int(input())
for i in range(n):
    print("READ", i, flush=True)
    if input().strip() == "true":
        print("OUTPUT", i, flush=True)
        break
else:
    print("OUTPUT", n, flush=True)
