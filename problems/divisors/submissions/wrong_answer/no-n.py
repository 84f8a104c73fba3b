# forgets n itself
n = int(input())
print(" ".join(str(i) for i in range(1, int(n ** 0.5) + 1) if n % i == 0 and i != n)
      + " " + " ".join(str(n // i) for i in range(2, int(n ** 0.5) + 1) if n % i == 0 and i != n // i))
