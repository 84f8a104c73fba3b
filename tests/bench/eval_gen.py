"""eval_gen.py DIR N: writes DIR/problems.jsonl (5 function problems of our
own), DIR/samples.jsonl (N Python samples: half right, half wrong, and every
100th an endless loop) and, for the bare baseline, DIR/bare/<i>/ with the very
files the judge's harness runs for that sample (main.py, solution.py, stdin)."""
import json
import os
import shutil
import sys

d, n = sys.argv[1], int(sys.argv[2])
hdir = os.path.join(os.path.dirname(__file__), "..", "..", "languages", "harness")


def template(name):
    # as the judge reads it (harness_read_template): an include line is that file's text
    out = []
    with open(os.path.join(hdir, name)) as f:
        for line in f:
            if line.startswith("#judge:include "):
                with open(os.path.join(hdir, line[len("#judge:include "):].rstrip("\n"))) as g:
                    line = g.read()
            out.append(line)
    return "".join(out)


harness = template("function.py")
P = [
    ("twoSum", [[[2, 7, 11, 15], 9], [[3, 2, 4], 6], [[3, 3], 6]], [[0, 1], [1, 2], [0, 1]],
     "class Solution:\n    def twoSum(self, nums, target):\n        seen = {}\n        for i, x in enumerate(nums):\n            if target - x in seen:\n                return [seen[target - x], i]\n            seen[x] = i\n",
     "class Solution:\n    def twoSum(self, nums, target):\n        return [0, 1]\n"),
    ("maxProfit", [[[7, 1, 5, 3, 6, 4]], [[7, 6, 4, 3, 1]], [[1, 2]]], [5, 0, 1],
     "def maxProfit(prices):\n    lo, best = float('inf'), 0\n    for p in prices:\n        lo = min(lo, p)\n        best = max(best, p - lo)\n    return best\n",
     "def maxProfit(prices):\n    return max(prices) - min(prices)\n"),
    ("isValid", [["()"], ["()[]{}"], ["(]"], ["([)]"]], [True, True, False, False],
     "def isValid(s):\n    st, pair = [], {')': '(', ']': '[', '}': '{'}\n    for c in s:\n        if c in pair:\n            if not st or st.pop() != pair[c]:\n                return False\n        else:\n            st.append(c)\n    return not st\n",
     "def isValid(s):\n    return s.count('(') == s.count(')')\n"),
    ("climbStairs", [[2], [3], [10], [45]], [2, 3, 89, 1836311903],
     "def climbStairs(n):\n    a, b = 1, 1\n    for _ in range(n):\n        a, b = b, a + b\n    return a\n",
     "def climbStairs(n):\n    return n\n"),
    ("groupSizes", [[["eat", "tea", "tan", "ate", "nat", "bat"]], [[""]], [["a"]]], [[1, 2, 3], [1], [1]],
     "def groupSizes(strs):\n    g = {}\n    for s in strs:\n        k = ''.join(sorted(s))\n        g[k] = g.get(k, 0) + 1\n    return sorted(g.values())\n",
     "def groupSizes(strs):\n    return [len(strs)]\n"),
]
endless = "def {f}(*a):\n    while True:\n        pass\n"
os.makedirs(d, exist_ok=True)
with open(os.path.join(d, "problems.jsonl"), "w") as f:
    for name, args, exp, _, _ in P:
        f.write(json.dumps({"task_id": "B/" + name, "function": name,
                            "tests": [{"args": a, "expected": e} for a, e in zip(args, exp)]}) + "\n")
bare = os.path.join(d, "bare")
shutil.rmtree(bare, ignore_errors=True)
with open(os.path.join(d, "samples.jsonl"), "w") as f:
    for i in range(n):
        name, args, _, right, wrong = P[i % len(P)]
        src = endless.format(f=name) if i % 100 == 99 else right if (i // len(P)) % 2 == 0 else wrong
        f.write(json.dumps({"task_id": "B/" + name, "completion": src}) + "\n")
        sd = os.path.join(bare, str(i))
        os.makedirs(sd)
        with open(os.path.join(sd, "main.py"), "w") as g:
            g.write(harness)
        with open(os.path.join(sd, "solution.py"), "w") as g:
            g.write(src)
        with open(os.path.join(sd, "stdin"), "w") as g:
            json.dump({"nonce": "0" * 24, "function": name, "tests": args}, g)
