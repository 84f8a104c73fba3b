#!/usr/bin/env python3
"""Writes our HumanEval-X fixtures in its published shape (problems as in
codegeex/benchmark/humaneval-x/<lang>/data/humaneval_<lang>.jsonl.gz: task_id
"CPP/0", prompt, canonical_solution, test, declaration, example_test, and
Python's text; samples as CodeGeeX's generation writes them: task_id, prompt,
generation), two problems of ours per language, and samples.jsonl with these
generations per problem, in order (the comment says what the harness decides):
  canonical               passes
  wrong answer            fails
  then per language the cases its rules decide (see KINDS)."""
import json
import os

HERE = os.path.dirname(os.path.abspath(__file__))

P = {
    "python": [
        ("def add(x: int, y: int) -> int:\n    \"\"\" Return the sum of x and y.\n    >>> add(2, 3)\n    5\n    \"\"\"\n",
         "    return x + y\n",
         "\n\nMETADATA = {}\n\n\ndef check(add):\n    assert add(2, 3) == 5\n    assert add(-1, 1) == 0\n\ncheck(add)\n",
         "    return x - y\n"),
        ("from typing import List\n\n\ndef evens(xs: List[int]) -> List[int]:\n    \"\"\" The even numbers of xs, in order.\n    >>> evens([1, 2, 4])\n    [2, 4]\n    \"\"\"\n",
         "    return [x for x in xs if x % 2 == 0]\n",
         "\n\nMETADATA = {}\n\n\ndef check(evens):\n    assert evens([1, 2, 4]) == [2, 4]\n    assert evens([]) == []\n\ncheck(evens)\n",
         "    return xs\n"),
    ],
    "js": [
        ("/* Return the sum of x and y.\n  >>> add(2, 3)\n  5\n  */\nconst add = (x, y) => {\n",
         "  return x + y;\n}\n\n",
         "const testAdd = () => {\n  console.assert(add(2, 3) === 5)\n  console.assert(add(-1, 1) === 0)\n}\n\ntestAdd()\n",
         "  return x - y;\n}\n"),
        ("/* The even numbers of xs, in order.\n  >>> evens([1, 2, 4])\n  [2, 4]\n  */\nconst evens = (xs) => {\n",
         "  return xs.filter(x => x % 2 === 0);\n}\n\n",
         "const testEvens = () => {\n  console.assert(JSON.stringify(evens([1, 2, 4])) === JSON.stringify([2, 4]))\n  console.assert(JSON.stringify(evens([])) === JSON.stringify([]))\n}\n\ntestEvens()\n",
         "  return xs;\n}\n"),
    ],
    "cpp": [
        ("/*\nReturn the sum of x and y.\n>>> add(2, 3)\n5\n*/\n#include<stdio.h>\nusing namespace std;\nint add(int x,int y){\n",
         "    return x+y;\n}\n",
         "#undef NDEBUG\n#include<assert.h>\nint main(){\n    assert (add(2,3)==5);\n    assert (add(-1,1)==0);\n}\n",
         "    return x-y;\n}\n"),
        # no <vector> in the prompt: the harness adds it
        ("/*\nThe even numbers of xs, in order.\n>>> evens({1, 2, 4})\n{2, 4}\n*/\n#include<stdio.h>\nusing namespace std;\nvector<int> evens(vector<int> xs){\n",
         "    vector<int> out;\n    for (int x: xs) if (x%2==0) out.push_back(x);\n    return out;\n}\n",
         "#undef NDEBUG\n#include<assert.h>\nint main(){\n    assert (evens({1,2,4})==vector<int>({2,4}));\n    assert (evens({}).size()==0);\n}\n",
         "    return xs;\n}\n"),
    ],
}

# more generations per language: (kind, generation or a function of the
# canonical one, passed by the harness?)
KINDS = {
    "python": [
        # cut before the first unindented line: the junk after the body goes
        ("body then unindented junk", lambda c: c + "\nprint(undefined_name)\n", True),
        ("starts unindented (cut to nothing)", lambda c: "def helper():\n    pass\n" + c, False),
        ("exit()", lambda c: "    exit()\n", False),
        ("os.getcwd (disabled)", lambda c: "    import os\n    os.getcwd()\n" + c, False),
        ("prints (ignored)", lambda c: "    print('debug')\n" + c, True),
        ("endless", lambda c: "    while True:\n        pass\n", False),
    ],
    "js": [
        ("return undefined", lambda c: "  return undefined;\n}\n", False),
        ("console.log (any output fails)", lambda c: "  console.log('debug');\n" + c, False),
        ("silent process.exit(1) (exit code ignored)", lambda c: "  process.exit(1);\n}\n", True),
        ("throws", lambda c: "  throw new Error('no');\n}\n", False),
        ("endless", lambda c: "  while (true) {}\n}\n", False),
    ],
    "cpp": [
        ("exit(0) (only the exit code counts)", lambda c: "    exit(0);\n}\n", True),
        ("does not compile", lambda c: "    return +;\n}\n", False),
        ("prints (ignored)", lambda c: "    printf(\"debug\\n\");\n" + c, True),
        ("endless", lambda c: "    while (1) {}\n}\n", False),
    ],
}

NAMES = {"python": "Python", "js": "JavaScript", "cpp": "CPP"}


def main():
    samples = []
    for lang, probs in P.items():
        rows = []
        for i, (prompt, canon, test, wrong) in enumerate(probs):
            tid = "%s/%d" % (NAMES[lang], i)
            row = {"task_id": tid, "prompt": prompt, "canonical_solution": canon, "test": test,
                   "declaration": prompt[prompt.rfind("\n", 0, len(prompt) - 1) + 1:],
                   "example_test": ""}
            if lang == "python":
                row["text"] = prompt
            rows.append(row)
            gens = [("canonical", canon, True), ("wrong answer", wrong, False)]
            gens += [(k, f(canon), p) for k, f, p in KINDS[lang]]
            for cid, (kind, g, passes) in enumerate(gens):
                samples.append({"task_id": tid, "completion_id": cid, "prompt": prompt,
                                "generation": g, "kind": kind, "harness_passes": passes})
        with open(os.path.join(HERE, "humaneval_%s.jsonl" % lang), "w") as f:
            for r in rows:
                f.write(json.dumps(r) + "\n")
    for lang in P:
        with open(os.path.join(HERE, "samples_%s.jsonl" % lang), "w") as f:
            for s in samples:
                if s["task_id"].startswith(NAMES[lang] + "/"):
                    f.write(json.dumps(s) + "\n")


if __name__ == "__main__":
    main()
