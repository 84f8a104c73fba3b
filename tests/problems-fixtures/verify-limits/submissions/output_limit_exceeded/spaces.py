# the right answer, then 10 MB of spaces: over the format's 8 MiB
import sys
sys.stdout.write(input() + "\n")
sys.stdout.write(" " * 10_000_000)
