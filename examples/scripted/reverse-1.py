print(input()[::-1]
