# Pass 1: the output must be the input number; then it asks for a pass with the
# number doubled, remembering it in feedback/state. Pass 2: the output must be
# the doubled number, and no further pass is asked for.
import os
import sys

inp, ans, fb = sys.argv[1:4]
state = os.path.join(fb, "state")
again = os.path.exists(state)
want = open(state).read().strip() if again else open(inp).read().split()[0]
got = sys.stdin.read().split()
if got != [want]:
    with open(os.path.join(fb, "judgemessage.txt"), "w") as f:
        f.write("pass %d: expected %s, got %s" % (2 if again else 1, want, " ".join(got)[:50]))
    sys.exit(43)
if not again:
    nxt = str(int(want) * 2)
    with open(state, "w") as f:
        f.write(nxt)
    with open(os.path.join(fb, "nextpass.in"), "w") as f:
        f.write(nxt + "\n")
sys.exit(42)
