# The score tag with result names instead of a number holds results.
# @EXPECTED_SCORE@: WRONG_ANSWER
print("hello")
