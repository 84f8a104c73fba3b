guessed = input().strip()
input()
print(next(c for c in "etaoinshrdlcumwfgypbvkjxqz" if c not in guessed))
