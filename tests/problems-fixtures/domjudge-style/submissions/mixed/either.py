# Not a verdict folder: the annotation's results are expected, any of them.
# @EXPECTED_RESULTS@: CORRECT, WRONG-ANSWER
print("hello there")
