# its own helper.py is replaced by the included one
from helper import answer
print(answer(int(input())) + 1)
