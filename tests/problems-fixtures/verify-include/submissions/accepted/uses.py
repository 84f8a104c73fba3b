from helper import answer
print(answer(int(input())))
