# Someone looks at this one: nothing to check automatically.
# @EXPECTED_RESULTS@: CHECK-MANUALLY
print("hello world")
