#!/usr/bin/env python3
"""Writes our EvalPlus fixtures beside this file, in the shape EvalPlus
publishes (problems of ours, not HumanEval's or MBPP's text):

  HumanEvalPlus.jsonl  task_id, prompt, entry_point, canonical_solution,
                       contract, base_input, plus_input, atol
  MbppPlus.jsonl       the same and assertion; ids chosen for the evaluator's
                       per-id input types (data/mbpp.py) and per-name oracles
                       (eval/_special_oracle.py)
  samples.jsonl        both datasets' samples: task_id, "solution" (a whole
                       program) or "completion" (appended to the prompt, no
                       separator), and "kind" (what the sample is; EvalPlus
                       ignores fields it does not know)
  expected.json        what EvalPlus's own evaluator decided, with --evalplus:
                       {"evaluator", "eval": {task_id: [[base_status,
                       plus_status], ...] in file order}, "printout":
                       {"humaneval": [lines], "mbpp": [lines]}}

    gen.py                       problems and samples only
    gen.py --data DIR            and expected.json: runs evalplus.evaluate
                                 from DIR/evalplus/evalplus (agree.py's
                                 --data; its reference driver) with
                                 /usr/bin/python3, 2 workers

Three samples wait on EvalPlus's time limits (a per-input alarm of 4 s, a
process deadline of the alarms' sum + 2 s), so a run takes about 15 s.
"""
import argparse
import json
import os
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))


def he(tid, prompt, entry, canonical, contract, base, plus, atol=0):
    return {"task_id": tid, "prompt": prompt, "entry_point": entry, "canonical_solution": canonical,
            "contract": contract, "base_input": base, "plus_input": plus, "atol": atol}


def mbpp(tid, text, entry, canonical, contract, assertion, base, plus, atol=0):
    # MBPP+'s prompt is the description in a docstring with no newline after
    # it; its canonical solution starts with one
    return {"task_id": tid, "prompt": "'''\n%s\n'''" % text, "entry_point": entry,
            "canonical_solution": canonical, "base_input": base, "plus_input": plus, "atol": atol,
            "contract": contract, "assertion": assertion}


C = " # $_CONTRACT_$\n"

HUMANEVAL = [
    he("HumanEval/0",
       "from typing import List\n\n\ndef average(values: List[float]) -> float:\n"
       "    \"\"\" The arithmetic mean of a non-empty list of numbers.\n"
       "    >>> average([1.0, 2.0, 3.0])\n    2.0\n    \"\"\"\n",
       "average", "    return sum(values) / len(values)\n",
       "\n    assert len(values) > 0, \"invalid inputs\"" + C,
       [[[1.0, 2.0, 3.0]], [[4.0]], [[2, 4]]],
       [[[0.1, 0.2, 0.3]], [[1, 2]], [[-2.5, 2.5, 7.0]]]),
    he("HumanEval/1",
       "from typing import List\n\n\ndef squares_below(n: int) -> List[int]:\n"
       "    \"\"\" The squares of 0, 1, ..., n - 1, in that order.\n"
       "    >>> squares_below(3)\n    [0, 1, 4]\n    \"\"\"\n",
       "squares_below", "    return [i * i for i in range(n)]\n",
       "\n    assert isinstance(n, int) and n >= 0, \"invalid inputs\"" + C,
       [[3], [0], [1]], [[5], [12]]),
    # one base input and one plus input: a sample that never finishes loading
    # costs the process deadline twice, (4 + 1) + 1 s each
    he("HumanEval/2",
       "\n\ndef shout(s: str) -> str:\n"
       "    \"\"\" s in capitals, with the first letter doubled and '!' at the end.\n"
       "    >>> shout('hi')\n    'HHI!'\n    \"\"\"\n",
       "shout", "    return (s[:1] + s).upper() + '!'\n",
       "\n    assert isinstance(s, str), \"invalid inputs\"" + C,
       [["hi"]], [[""]]),
    # a float expected first makes atol 1e-6 for the rest of that run
    he("HumanEval/3",
       "\n\ndef scale(x, k: int):\n"
       "    \"\"\" x times k.\n    >>> scale(0.5, 2)\n    1.0\n    \"\"\"\n",
       "scale", "    return x * k\n",
       "\n    assert isinstance(k, int), \"invalid inputs\"" + C,
       [[0.5, 2], [10 ** 9, 1]], [[10 ** 9, 1], [0.25, 4]]),
    # EvalPlus grades find_zero by |poly(xs, out)| <= atol, not by its output
    he("HumanEval/32",
       "import math\n\n\ndef find_zero(xs: list) -> float:\n"
       "    \"\"\" xs are the coefficients of a polynomial of odd degree,\n"
       "    xs[0] + xs[1] * x + xs[2] * x ** 2 + ...: a real x where it is zero.\n"
       "    >>> round(find_zero([-2, 1]), 4)\n    2.0\n    \"\"\"\n",
       "find_zero",
       "    p = lambda x: sum(c * x ** i for i, c in enumerate(xs))\n"
       "    lo, hi = -1.0, 1.0\n"
       "    while p(lo) * p(hi) > 0:\n"
       "        lo, hi = lo * 2, hi * 2\n"
       "    for _ in range(100):\n"
       "        mid = (lo + hi) / 2\n"
       "        if (p(mid) > 0) == (p(lo) > 0):\n"
       "            lo = mid\n"
       "        else:\n"
       "            hi = mid\n"
       "    return lo\n",
       "\n    assert len(xs) % 2 == 0 and xs[-1] != 0, \"invalid inputs\"" + C,
       [[[-6, 11, -6, 1]], [[1, 2]], [[-2, 1]]], [[[0, 0, 0, 1]], [[5, 0, 0, 0, 0, 1]]],
       atol=0.0001),
]

MBPP = [
    # in data/mbpp.py's list that makes each argument a tuple, and in the
    # set-equality oracle's names
    mbpp("Mbpp/2", "Write a function that returns the items two lists have in common.",
         "similar_elements", "\ndef similar_elements(a, b):\n    return tuple(set(a) & set(b))\n",
         "\n    assert isinstance(a, tuple) and isinstance(b, tuple), \"invalid inputs\"" + C,
         "\nassert set(similar_elements((3, 4, 5, 6), (5, 7, 4, 10))) == set((4, 5))\n",
         [[[3, 4, 5, 6], [5, 7, 4, 10]], [[1, 2, 3, 4], [5, 4, 3, 7]]],
         [[[], []], [[1, 2, 2], [2, 9]]]),
    # each pair of the list becomes a tuple (data/mbpp.py's nested list)
    mbpp("Mbpp/63", "Write a function that returns the largest difference between the two numbers "
         "of a pair, over the pairs of a list.",
         "max_difference", "\ndef max_difference(pairs):\n    return max(abs(a - b) for a, b in pairs)\n",
         "\n    assert len(pairs) > 0, \"invalid inputs\"" + C,
         "\nassert max_difference([(3, 5), (1, 7), (10, 3), (1, 2)]) == 7\n",
         [[[[3, 5], [1, 7], [10, 3], [1, 2]]], [[[4, 6], [2, 17]]]],
         [[[[0, 0]]], [[[-5, 5], [1, 1]]]]),
    # an ordinary int result
    mbpp("Mbpp/17", "Write a function that returns the perimeter of a square from its side.",
         "square_perimeter", "\ndef square_perimeter(a):\n    return 4 * a\n",
         "\n    assert isinstance(a, int) and a >= 0, \"invalid inputs\"" + C,
         "\nassert square_perimeter(10) == 40\n",
         [[10], [5], [4]], [[7], [0], [10 ** 6]]),
    # an atol of 1e-4
    mbpp("Mbpp/82", "Write a function that returns the volume of a sphere from its radius.",
         "volume_sphere", "\nimport math\ndef volume_sphere(r):\n    return 4 / 3 * math.pi * r ** 3\n",
         "\n    assert isinstance(r, (int, float)) and r > 0, \"invalid inputs\"" + C,
         "\nassert math.isclose(volume_sphere(10), 4188.790204786391, rel_tol=0.001)\n",
         [[10], [25], [20]], [[0.5], [3.7], [1]], atol=0.0001),
    # sum_div's oracle also passes an output of 0
    mbpp("Mbpp/295", "Write a function that returns the sum of the proper divisors of a number.",
         "sum_div", "\ndef sum_div(n):\n    return sum(i for i in range(1, n) if n % i == 0)\n",
         "\n    assert isinstance(n, int) and n > 0, \"invalid inputs\"" + C,
         "\nassert sum_div(8) == 7\n",
         [[8], [12], [7]], [[1], [36]]),
    # check_str's expected outputs are "is not None"
    mbpp("Mbpp/737", "Write a function that tells whether a string starts with a vowel, with a regex.",
         "check_str", "\nimport re\ndef check_str(string):\n    return re.search('^[aeiouAEIOU]', string)\n",
         "\n    assert isinstance(string, str), \"invalid inputs\"" + C,
         "\nassert check_str(\"annie\")\n",
         [["annie"], ["dawood"], ["Else"]], [[""], ["u"], ["xyz"]]),
    # inputs that only survive as published: an int beyond a double's
    # precision, a string holding a NUL, NaN and Infinity (Python's json
    # writes them; MBPP+'s Mbpp/404 holds Infinity); an id of no list
    mbpp("Mbpp/900", "Write a function that describes a value: the digit sum of an int, the length "
         "of a string, the repr of a float.",
         "describe", "\ndef describe(x):\n    if isinstance(x, str):\n        return len(x)\n"
         "    if isinstance(x, float):\n        return repr(x)\n"
         "    return sum(int(c) for c in str(abs(x)))\n",
         "\n    assert isinstance(x, (int, float, str)), \"invalid inputs\"" + C,
         "\nassert describe(123) == 6\n",
         [[12345678901234567890123456789], ["a\0b"], [1.5]],
         [[-(2 ** 70)], [float("nan")], [float("inf")], [float("-inf")], ["\0"]]),
]


def canon(p):
    if p["task_id"].startswith("Mbpp/"):
        return {"solution": p["prompt"] + p["canonical_solution"]}
    return {"completion": p["canonical_solution"]}


HE, MB = {p["task_id"]: p for p in HUMANEVAL}, {p["task_id"]: p for p in MBPP}

# (task_id, kind, {"solution": ...} or {"completion": ...}), in file order
SAMPLES = [
    ("HumanEval/0", "canonical", canon(HE["HumanEval/0"])),
    ("HumanEval/0", "an int where a float is expected (exact on base only)",
     {"completion": "    return int(sum(values) / len(values))\n"}),
    ("HumanEval/0", "a float within 1e-6", {"completion": "    return sum(values) / len(values) + 1e-9\n"}),
    ("HumanEval/0", "a float 1e-3 off", {"completion": "    return sum(values) / len(values) + 1e-3\n"}),
    ("HumanEval/0", "statistics.mean (an int on [2, 4], exact fractions)",
     {"completion": "    import statistics\n    return statistics.mean(values)\n"}),
    ("HumanEval/1", "canonical", canon(HE["HumanEval/1"])),
    ("HumanEval/1", "a tuple where a list is expected", {"completion": "    return tuple(i * i for i in range(n))\n"}),
    ("HumanEval/1", "floats where ints are expected (==)", {"completion": "    return [float(i * i) for i in range(n)]\n"}),
    ("HumanEval/1", "right on base, wrong from n = 11 (plus)",
     {"completion": "    return [i * i for i in range(min(n, 10))]\n"}),
    ("HumanEval/1", "raises at module level",
     {"solution": "import no_such_module_here\n\ndef squares_below(n):\n    return [i * i for i in range(n)]\n"}),
    ("HumanEval/1", "wrong value", {"completion": "    return [i * i for i in range(1, n + 1)]\n"}),
    ("HumanEval/2", "canonical", canon(HE["HumanEval/2"])),
    ("HumanEval/2", "prints to stdout", {"completion": "    print('debug:', s)\n    return (s[:1] + s).upper() + '!'\n"}),
    ("HumanEval/2", "open() (builtins.open is None)",
     {"completion": "    with open('log.txt', 'w') as f:\n        f.write(s)\n    return (s[:1] + s).upper() + '!'\n"}),
    ("HumanEval/2", "a __main__ block that exits 1 (exec'd, __name__ is not __main__)",
     {"solution": "def shout(s):\n    return (s[:1] + s).upper() + '!'\n\n\n"
                  "if __name__ == \"__main__\":\n    import sys\n    print(shout(sys.argv[1]))\n    sys.exit(1)\n"}),
    ("HumanEval/2", "right on base, raises on '' (plus)", {"completion": "    return (s[0] + s).upper() + '!'\n"}),
    ("HumanEval/2", "never finishes loading (killed: timeout)",
     {"solution": "while True:\n    pass\n\ndef shout(s):\n    return (s[:1] + s).upper() + '!'\n"}),
    ("HumanEval/3", "canonical", canon(HE["HumanEval/3"])),
    ("HumanEval/3", "off by one on big ints (passes after a float made atol 1e-6)",
     {"completion": "    r = x * k\n    return r + 1 if isinstance(r, int) and r > 10 ** 6 else r\n"}),
    ("HumanEval/32", "canonical", canon(HE["HumanEval/32"])),
    ("HumanEval/32", "another zero, as an int",
     {"completion": "    if xs == [-6, 11, -6, 1]:\n        return 3\n" + HE["HumanEval/32"]["canonical_solution"]}),
    ("HumanEval/32", "a zero 1e-6 off", {"completion": HE["HumanEval/32"]["canonical_solution"].replace(
        "    return lo\n", "    return lo + 1e-6\n")}),
    ("HumanEval/32", "always 0.0", {"completion": "    return 0.0\n"}),
    ("HumanEval/32", "returns None", {"completion": "    return None\n"}),
    ("HumanEval/32", "loops forever on one base input (alarm: fail)",
     {"completion": "    while xs == [1, 2]:\n        pass\n" + HE["HumanEval/32"]["canonical_solution"]}),

    ("Mbpp/2", "canonical", canon(MB["Mbpp/2"])),
    ("Mbpp/2", "another order (set oracle)",
     {"solution": "def similar_elements(a, b):\n    return tuple(sorted(set(a) & set(b), reverse=True))\n"}),
    ("Mbpp/2", "a list with repeats (set oracle)",
     {"solution": "def similar_elements(a, b):\n    return [x for x in a if x in b]\n"}),
    ("Mbpp/2", "asserts its arguments are tuples",
     {"solution": "def similar_elements(a, b):\n    assert type(a) is tuple and type(b) is tuple\n"
                  "    return tuple(set(a) & set(b))\n"}),
    ("Mbpp/2", "wrong value", {"solution": "def similar_elements(a, b):\n    return tuple(set(a) | set(b))\n"}),
    ("Mbpp/2", "completion glued to the prompt's closing quotes (syntax error)",
     {"completion": "def similar_elements(a, b):\n    return tuple(set(a) & set(b))\n"}),
    ("Mbpp/2", "completion starting with a newline",
     {"completion": "\ndef similar_elements(a, b):\n    return tuple(set(a) & set(b))\n"}),
    ("Mbpp/63", "canonical", canon(MB["Mbpp/63"])),
    ("Mbpp/63", "asserts the pairs are tuples",
     {"solution": "def max_difference(pairs):\n    assert all(type(p) is tuple for p in pairs)\n"
                  "    return max(abs(a - b) for a, b in pairs)\n"}),
    ("Mbpp/63", "right on base, wrong on a single pair (plus)",
     {"solution": "def max_difference(pairs):\n    return max(abs(a - b) for a, b in pairs) if len(pairs) > 1 else 1\n"}),
    ("Mbpp/17", "canonical", canon(MB["Mbpp/17"])),
    ("Mbpp/17", "wrong value (off by one)", {"solution": "def square_perimeter(a):\n    return 4 * a + 1\n"}),
    ("Mbpp/17", "a float where an int is expected (==)", {"solution": "def square_perimeter(a):\n    return 4.0 * a\n"}),
    ("Mbpp/17", "prints to stdout", {"solution": "print('loaded')\n\ndef square_perimeter(a):\n    print(a)\n    return 4 * a\n"}),
    ("Mbpp/17", "a __main__ block reading stdin",
     {"solution": "def square_perimeter(a):\n    return 4 * a\n\n\nif __name__ == '__main__':\n"
                  "    print(square_perimeter(int(input())))\n"}),
    ("Mbpp/17", "exit() at module level (exit is None)", {"solution": "exit()\n\ndef square_perimeter(a):\n    return 4 * a\n"}),
    ("Mbpp/17", "sys.exit(0) at module level, after the def",
     {"solution": "import sys\n\ndef square_perimeter(a):\n    return 4 * a\n\nsys.exit(0)\n"}),
    ("Mbpp/17", "reads a file at module level (open is None)",
     {"solution": "SIDES = open('sides.txt').read()\n\ndef square_perimeter(a):\n    return 4 * a\n"}),
    ("Mbpp/17", "loops forever on one plus input (alarm: fail)",
     {"solution": "def square_perimeter(a):\n    while a == 7:\n        pass\n    return 4 * a\n"}),
    ("Mbpp/82", "canonical", canon(MB["Mbpp/82"])),
    ("Mbpp/82", "pi as 3.1415927 (within atol and rtol)",
     {"solution": "def volume_sphere(r):\n    return 4 / 3 * 3.1415927 * r ** 3\n"}),
    ("Mbpp/82", "pi as 3.1416 (outside)", {"solution": "def volume_sphere(r):\n    return 4 / 3 * 3.1416 * r ** 3\n"}),
    ("Mbpp/82", "an int where a float is expected",
     {"solution": "import math\ndef volume_sphere(r):\n    return round(4 / 3 * math.pi * r ** 3)\n"}),
    ("Mbpp/295", "canonical", canon(MB["Mbpp/295"])),
    ("Mbpp/295", "always 0 (the oracle passes 0)", {"solution": "def sum_div(n):\n    return 0\n"}),
    ("Mbpp/295", "always 1", {"solution": "def sum_div(n):\n    return 1\n"}),
    ("Mbpp/295", "counts n itself (off by n)",
     {"solution": "def sum_div(n):\n    return sum(i for i in range(1, n + 1) if n % i == 0)\n"}),
    ("Mbpp/737", "canonical (a match object or None)", canon(MB["Mbpp/737"])),
    ("Mbpp/737", "a bool", {"solution": "import re\ndef check_str(string):\n    return bool(re.match('[aeiouAEIOU]', string))\n"}),
    ("Mbpp/737", "the matched text or None",
     {"solution": "import re\ndef check_str(string):\n    m = re.match('[aeiouAEIOU]', string)\n"
                  "    return m.group(0) if m else None\n"}),
    ("Mbpp/737", "1 or 0 (both not None)",
     {"solution": "def check_str(string):\n    return 1 if string[:1] in list('aeiouAEIOU') else 0\n"}),
    ("Mbpp/737", "always None", {"solution": "def check_str(string):\n    return None\n"}),
    ("Mbpp/900", "canonical", canon(MB["Mbpp/900"])),
    ("Mbpp/900", "right only on the string as published (its NUL kept)",
     {"solution": "def describe(x):\n    if isinstance(x, str):\n        return 3 if x.startswith('a') else len(x)\n"
                  "    if isinstance(x, float):\n        return repr(x)\n"
                  "    return sum(int(c) for c in str(abs(x)))\n"}),
    ("Mbpp/900", "reads ints through a float (wrong on the big ones)",
     {"solution": "def describe(x):\n    if isinstance(x, str):\n        return len(x)\n"
                  "    if isinstance(x, float):\n        return repr(x)\n"
                  "    return sum(int(c) for c in str(float(abs(x))) if c.isdigit())\n"}),
    ("Mbpp/900", "str() of floats, '%g' of NaN and Infinity (the same text)",
     {"solution": "def describe(x):\n    if isinstance(x, str):\n        return len(x)\n"
                  "    if isinstance(x, float):\n        return '%g' % x if x != x or abs(x) == float('inf') else str(x)\n"
                  "    return sum(int(c) for c in str(abs(x)))\n"}),
]


def write_jsonl(name, rows):
    with open(os.path.join(HERE, name), "w") as f:
        for r in rows:
            f.write(json.dumps(r) + "\n")


def expected(data):
    """Runs EvalPlus's evaluator on each dataset's samples (agree.py's driver)."""
    sys.path.insert(0, os.path.join(HERE, "..", "..", "agreement"))
    sys.dont_write_bytecode = True
    import agree
    out = {"evaluator": "evalplus/evalplus evalplus.evaluate.evaluate, parallel 2, min_time_limit 4",
           "eval": {}, "printout": {}}
    with tempfile.TemporaryDirectory() as tmp:
        for ds, fname in (("humaneval", "HumanEvalPlus.jsonl"), ("mbpp", "MbppPlus.jsonl")):
            rows = [dict({"task_id": t, "kind": k}, **s) for t, k, s in SAMPLES
                    if t.startswith("Mbpp/") == (ds == "mbpp")]
            d = os.path.join(tmp, ds)
            res, printout, secs = agree.ep_reference(os.path.join(data, "evalplus"), ds, os.path.join(HERE, fname), rows, d, 2, 4.0)
            # in the samples' order (the evaluator's is the order tasks finished)
            for tid in dict.fromkeys(r["task_id"] for r in rows):
                out["eval"][tid] = [[e["base_status"], e["plus_status"]] for e in res["eval"][tid]]
            out["printout"][ds] = printout
            print("%s: %d samples in %.1f s" % (ds, len(rows), secs), file=sys.stderr)
    with open(os.path.join(HERE, "expected.json"), "w") as f:
        f.write("{\"evaluator\": %s,\n \"eval\": {\n" % json.dumps(out["evaluator"]))
        f.write(",\n".join("  %s: %s" % (json.dumps(t), json.dumps(v)) for t, v in out["eval"].items()))
        f.write("\n },\n \"printout\": %s}\n" % json.dumps(out["printout"]))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", help="agree.py's data folder (EvalPlus's package in DIR/evalplus/evalplus): "
                    "write expected.json")
    a = ap.parse_args()
    write_jsonl("HumanEvalPlus.jsonl", HUMANEVAL)
    write_jsonl("MbppPlus.jsonl", MBPP)
    write_jsonl("samples.jsonl", [dict({"task_id": t}, **s, kind=k) for t, k, s in SAMPLES])
    if a.data:
        expected(os.path.abspath(a.data))


if __name__ == "__main__":
    main()
