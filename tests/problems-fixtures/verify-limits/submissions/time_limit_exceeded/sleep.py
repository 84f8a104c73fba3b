# uses no CPU: only a wall limit ends it
import time
time.sleep(5)
print(input())
