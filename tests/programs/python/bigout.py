# prints 100 MB, then spins: a judge that waits for the end times out instead
import sys

line = "x" * 1023 + "\n"
write = sys.stdout.write
for _ in range(100 * 1024):
    write(line)
sys.stdout.flush()
while True:
    pass
