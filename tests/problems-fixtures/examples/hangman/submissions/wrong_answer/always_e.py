# Guesses e on every pass: the second pass repeats a letter.
print("e")
