# The annotation allows two results; the folder's one alone is expected.
# @EXPECTED_RESULTS@:   RUN_TIME_ERROR , ACCEPTED
print("hello world")
raise SystemExit(3)
