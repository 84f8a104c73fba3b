import sys
sys.stderr.write("validator broke\n")
sys.exit(1)
