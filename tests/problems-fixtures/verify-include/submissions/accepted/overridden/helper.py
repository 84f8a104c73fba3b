# wrong on purpose: include/python3/helper.py replaces this file
def answer(n):
    return n + 1000
