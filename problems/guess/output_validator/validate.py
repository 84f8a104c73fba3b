# Interactive validator of Guess the Number: argv = input answer feedback_dir;
# stdin is the submission's output, stdout its input.
import os
import sys

secret = int(open(sys.argv[1]).read().split()[0])
feedback = sys.argv[3]
LIMIT = 10


def say(text):
    """Replies to the program; False when it is gone (its pipe is closed)."""
    try:
        print(text, flush=True)
        return True
    except BrokenPipeError:
        os.dup2(os.open(os.devnull, os.O_WRONLY), 1)  # nothing left to flush at exit
        return False


def verdict(code, message):
    with open(os.path.join(feedback, "judgemessage.txt"), "w") as f:
        f.write(message)
    sys.exit(code)


for turn in range(1, LIMIT + 1):
    line = sys.stdin.readline()
    if not line:
        verdict(43, "no guess %d: the program ended or closed its output" % turn)
    try:
        guess = int(line.strip())
    except ValueError:
        verdict(43, "guess %d is not a number: %r" % (turn, line.strip()[:40]))
    if guess == secret:
        say("correct")
        if sys.stdin.read(1):
            verdict(43, "output after the right guess")
        verdict(42, "found %d in %d guesses" % (secret, turn))
    if not say("lower" if secret < guess else "higher"):
        verdict(43, "the program stopped reading after guess %d" % turn)
verdict(43, "no right guess in %d tries" % LIMIT)
