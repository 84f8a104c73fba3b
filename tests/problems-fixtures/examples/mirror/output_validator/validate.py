# Pass 1 (input "encode"): a code of the word's length, not the word itself
# unless it is a palindrome; asks for pass 2 with it. Pass 2 (input
# "decode"): the output must be the word of the answer file.
import os
import sys

inp, ans, fb = sys.argv[1:4]
mode, text = open(inp).read().split()[:2]
word = open(ans).read().strip()
out = sys.stdin.read().split()


def reject(why):
    with open(os.path.join(fb, "judgemessage.txt"), "w") as f:
        f.write(why)
    sys.exit(43)


if len(out) != 1:
    reject("expected one word, got %d" % len(out))
if mode == "decode":
    if out[0] != word:
        reject("decoded %r, not %r" % (out[0][:30], word))
    sys.exit(42)
if len(out[0]) != len(word) or (out[0] == word and word != word[::-1]):
    reject("bad code %r" % out[0][:30])
with open(os.path.join(fb, "nextpass.in"), "w") as f:
    f.write("decode\n" + out[0] + "\n")
sys.exit(42)
