#!/usr/bin/env python3
"""Writes our LiveCodeBench fixtures in the shape of code_generation_lite's
rows (problems.jsonl: question_title, question_content, platform,
question_id, contest_id, contest_date, starter_code, difficulty,
public_test_cases and private_test_cases as JSON strings of [{input, output,
testtype}], the private ones base64 of zlib of a pickled str as published,
metadata a JSON string with func_name for LeetCode), problems of ours, and
samples.json, custom_evaluator's [{"question_id", "code_list"}], with beside
it expected.json: {question_id: [passes, ...]} per code, what LiveCodeBench's
runner decides (checked with tests/agreement/agree.py livecodebench)."""
import base64
import json
import os
import pickle
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))


def packed(tests):
    return base64.b64encode(zlib.compress(pickle.dumps(json.dumps(tests)))).decode()


def tests(kind, pairs):
    return [{"input": i, "output": o, "testtype": kind} for i, o in pairs]


def problem(qid, title, platform, fn, public, private, starter="", packed_private=True):
    kind = "functional" if fn else "stdin"
    return {"question_title": title, "question_content": title + ".", "platform": platform,
            "question_id": qid, "contest_id": qid.split("_")[0], "contest_date": "2024-01-06T00:00:00",
            "starter_code": starter, "difficulty": "easy",
            "public_test_cases": json.dumps(tests(kind, public)),
            "private_test_cases": packed(tests(kind, private)) if packed_private
            else json.dumps(tests(kind, private)),
            "metadata": json.dumps({"func_name": fn} if fn else {})}


PROBLEMS = [
    # stdin: the sum of a list of integers
    problem("abc001_a", "Sum", "atcoder", None, [("3\n1 2 3\n", "6\n")],
            [("2\n10 -4\n", "6\n"), ("1\n1000000000000000000\n", "1000000000000000000\n")]),
    # stdin: the mean, printed with decimals (the comparison is by Decimal tokens)
    problem("abc002_b", "Mean", "atcoder", None, [("2\n1 2\n", "1.5\n")], [("4\n1 1 1 2\n", "1.25\n")],
            packed_private=False),
    # call-based, LeetCode's Solution class
    problem("3000", "Two Sum", "leetcode", "twoSum", [("[2,7,11,15]\n9", "[0, 1]")],
            [("[3,2,4]\n6", "[1, 2]"), ("[3,3]\n6", "[0, 1]")],
            starter="class Solution:\n    def twoSum(self, nums: List[int], target: int) -> List[int]:\n        "),
    # call-based, a float result: Python == with no tolerance
    problem("3001", "Average", "leetcode", "average", [("[1,2]", "1.5")], [("[0.1,0.2]", "0.15000000000000002")]),
]

SUM_OK = "n = int(input())\nprint(sum(map(int, input().split())))\n"
MEAN = "n=int(input())\na=list(map(int,input().split()))\nprint({fmt})\n"
SAMPLES = {
    "abc001_a": [
        (SUM_OK, True),
        ("import sys\ndata = sys.stdin.read().split()\nprint(sum(map(int, data[1:])))\n", True),
        ("def main():\n    n = int(input())\n    print(sum(map(int, input().split())))\n\nif __name__ == '__main__':\n    main()\n", True),
        # wrong token
        ("n = int(input())\nprint(sum(map(int, input().split())) + 1)\n", False),
        # extra line: line counts differ
        ("n = int(input())\nprint(sum(map(int, input().split())))\nprint()\nprint('done')\n", False),
        # trailing spaces and an extra blank line at the end are stripped
        ("n = int(input())\nprint(str(sum(map(int, input().split()))) + '   ')\nprint()\n", True),
        # exit() is allowed: graded on what was printed
        ("n = int(input())\nprint(sum(map(int, input().split())))\nexit()\n", True),
        # for line in sys.stdin: the runner's mock is not iterable (-4)
        ("import sys\nlines = [l for l in sys.stdin]\nprint(sum(map(int, lines[1].split())))\n", False),
        # global in a helper: module variables become locals of the wrapper (-4)
        ("total = 0\ndef add(x):\n    global total\n    total += x\nn = int(input())\nfor v in input().split():\n    add(int(v))\nprint(total)\n", False),
        # timeout (-3)
        ("while True:\n    pass\n", False),
        # syntax error
        ("print(\n", False),
    ],
    "abc002_b": [
        ("n=int(input())\na=list(map(int,input().split()))\nprint(sum(a)/n)\n", True),
        # 1.50 equals 1.5 as Decimals
        ("n=int(input())\na=list(map(int,input().split()))\nprint('%.2f' % (sum(a)/n))\n", True),
        # 1.2 is not 1.25: no tolerance
        ("n=int(input())\na=list(map(int,input().split()))\nprint('%.1f' % (sum(a)/n))\n", False),
        # a float within 1e-6 is still wrong: Decimal equality is exact
        ("n=int(input())\na=list(map(int,input().split()))\nprint(sum(a)/n + 1e-9)\n", False),
    ],
    "3000": [
        ("class Solution:\n    def twoSum(self, nums, target):\n        seen = {}\n        for i, x in enumerate(nums):\n            if target - x in seen:\n                return [seen[target - x], i]\n            seen[x] = i\n", True),
        # a tuple is turned into a list first
        ("class Solution:\n    def twoSum(self, nums, target):\n        for i in range(len(nums)):\n            for j in range(i + 1, len(nums)):\n                if nums[i] + nums[j] == target:\n                    return (i, j)\n", True),
        ("class Solution:\n    def twoSum(self, nums, target):\n        return [1, 0]\n", False),
        # the method is missing
        ("class Solution:\n    def twoSums(self, nums, target):\n        return [0, 1]\n", False),
        # raises
        ("class Solution:\n    def twoSum(self, nums, target):\n        return nums[10]\n", False),
        # sys.exit in call-based code ends the worker
        ("import sys\nclass Solution:\n    def twoSum(self, nums, target):\n        sys.exit(0)\n", False),
    ],
    "3001": [
        ("def average(xs):\n    return sum(xs) / len(xs)\n", True),
        # 0.15 != 0.15000000000000002: no float tolerance
        ("def average(xs):\n    return round(sum(xs) / len(xs), 6)\n", False),
        # an int equal to the expected float is equal (1.5 is not an int: fails)
        ("def average(xs):\n    return sum(xs) // len(xs)\n", False),
        # a slow call: the alarm fires (timeout)
        ("import time\ndef average(xs):\n    time.sleep(30)\n    return 0\n", False),
    ],
}


def main():
    with open(os.path.join(HERE, "problems.jsonl"), "w") as f:
        for p in PROBLEMS:
            f.write(json.dumps(p) + "\n")
    samples = [{"question_id": q, "code_list": [c for c, _ in v]} for q, v in SAMPLES.items()]
    with open(os.path.join(HERE, "samples.json"), "w") as f:
        json.dump(samples, f, indent=1)
    with open(os.path.join(HERE, "expected.json"), "w") as f:
        json.dump({q: [p for _, p in v] for q, v in SAMPLES.items()}, f, indent=1)


main()
