mode, text = input(), input()
print(text[::-1])
