# Right on the first pass only: always prints 3.
print(3)
