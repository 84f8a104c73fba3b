import sys

print("about to exit with 3")
sys.exit(3)
