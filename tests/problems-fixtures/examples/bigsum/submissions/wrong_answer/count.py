# Prints N, not the sum.
print(input())
