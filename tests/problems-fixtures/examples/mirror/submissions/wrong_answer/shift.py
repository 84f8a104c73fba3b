# Shifts each letter by one on both passes: pass 2 does not undo pass 1.
mode, text = input(), input()
print("".join(chr((ord(c) - 97 + 1) % 26 + 97) for c in text))
