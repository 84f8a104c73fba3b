# prints 100 MB
import sys

line = "x" * 1023 + "\n"
write = sys.stdout.write
for _ in range(100 * 1024):
    write(line)
