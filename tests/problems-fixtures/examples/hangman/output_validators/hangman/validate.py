# Multi-pass hangman validator: input (this pass's) = guessed letters, pattern;
# answer = the word; stdin = the program's guess. Accepts with nextpass.in while
# letters are missing, accepts without it once the word is complete, rejects a
# guess that is not one new lowercase letter.
import os
import string
import sys

inp, ans, fb = sys.argv[1:4]
lines = open(inp).read().split("\n")
guessed, pattern = lines[0].strip(), lines[1].strip()
word = open(ans).read().strip()
out = sys.stdin.read().split()


def reject(why):
    with open(os.path.join(fb, "judgemessage.txt"), "w") as f:
        f.write(why)
    sys.exit(43)


if len(out) != 1 or len(out[0]) != 1 or out[0] not in string.ascii_lowercase:
    reject("expected one lowercase letter, got %r" % " ".join(out)[:40])
c = out[0]
if c in guessed:
    reject("letter %s was guessed before" % c)
pattern = "".join(w if w == c else p for w, p in zip(word, pattern))
if pattern == word:
    sys.exit(42)
with open(os.path.join(fb, "nextpass.in"), "w") as f:
    f.write(guessed + c + "\n" + pattern + "\n")
sys.exit(42)
