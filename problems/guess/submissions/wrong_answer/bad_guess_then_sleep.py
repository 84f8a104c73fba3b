# Sends a guess that is not a number, then sleeps instead of reading the reply:
# the validator has rejected by then, so this is wrong_answer, never timeout.
import time

print("zero", flush=True)
time.sleep(3600)
