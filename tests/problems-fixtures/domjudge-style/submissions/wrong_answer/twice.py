# Two annotations in one file: DOMjudge refuses them and goes by the folder.
# @EXPECTED_RESULTS@: CORRECT
# @EXPECTED_RESULTS@: CORRECT
print("goodbye world")
