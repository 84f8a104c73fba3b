import sys
words = sys.stdin.read().split()
n = int(words[0])
print("\n".join(words[1:n + 1:2]))
