# Fine on the first pass, crashes once a letter was guessed.
guessed = input().strip()
if guessed:
    raise SystemExit(3)
print("e")
