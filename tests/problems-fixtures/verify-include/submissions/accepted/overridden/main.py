import helper
print(helper.answer(int(input())))
