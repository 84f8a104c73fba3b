# Right only when N is 1 or 2: group 1's points, not group 2's.
import sys
print(sys.stdin.read().split()[1])
