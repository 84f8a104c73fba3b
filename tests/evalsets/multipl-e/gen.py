#!/usr/bin/env python3
"""Writes our MultiPL-E fixtures: completion files in MultiPL-E's published
shape (one JSON object per problem and language: name, language, prompt,
tests, completions, stop_tokens, temperature, top_p, max_tokens), with prompts
and tests laid out as its dataset_builder translators lay them out
(humaneval_to_cpp.py, _js.py, _cs.py, _py.py), for three problems of ours.
Each file has these completions, in order:
  0 right   1 wrong   2 endless loop   3 does not compile / parse
  4 exits 0 early (passes in the evaluator: only the exit code counts)
  5 right, followed by what a model writes after the stop token (cut here)
Run: python3 gen.py (writes cpp/ js/ cs/ py/ beside it)."""
import json
import os

HERE = os.path.dirname(os.path.abspath(__file__))
CS_USINGS = ("using System;\nusing System.Numerics;\nusing System.Diagnostics;\n"
             "using System.Collections.Generic;\nusing System.Linq;\nusing System.Text;\n"
             "using System.Security.Cryptography;\n")

# name, doc, python signature, cases [(args as python text per language, expected)]
PROBLEMS = [
    ("JudgeEval_0_add", "Return the sum of x and y.",
     {"py": ("def add(x: int, y: int) -> int:\n", "add"),
      "js": ("function add(x, y){\n", "add"),
      "cpp": ("long add(long x, long y) {\n", "add"),
      "cs": ("    public static long Add(long x, long y) {\n", "Add")},
     [({"py": "1, 2", "js": "1, 2", "cpp": "(1), (2)", "cs": "(1L), (2L)"},
       {"py": "3", "js": "3", "cpp": "(3)", "cs": "(3L)"}),
      ({"py": "-1, 1", "js": "-1, 1", "cpp": "(-1), (1)", "cs": "(-1L), (1L)"},
       {"py": "0", "js": "0", "cpp": "(0)", "cs": "(0L)"})],
     {"py": ("    return x + y\n", "    return x - y\n"),
      "js": ("  return x + y;\n}", "  return x - y;\n}"),
      "cpp": ("    return x + y;", "    return x - y;"),
      "cs": ("        return x + y;", "        return x - y;")}),
    ("JudgeEval_1_count_vowels", "Count the vowels (a, e, i, o, u) of s.",
     {"py": ("def count_vowels(s: str) -> int:\n", "count_vowels"),
      "js": ("function count_vowels(s){\n", "count_vowels"),
      "cpp": ("long count_vowels(std::string s) {\n", "count_vowels"),
      "cs": ("    public static long CountVowels(string s) {\n", "CountVowels")},
     [({"py": "'hello'", "js": '"hello"', "cpp": '("hello")', "cs": '("hello")'},
       {"py": "2", "js": "2", "cpp": "(2)", "cs": "(2L)"}),
      ({"py": "'xyz'", "js": '"xyz"', "cpp": '("xyz")', "cs": '("xyz")'},
       {"py": "0", "js": "0", "cpp": "(0)", "cs": "(0L)"})],
     {"py": ("    return sum(1 for c in s if c in 'aeiou')\n", "    return len(s)\n"),
      "js": ("  return s.split('').filter(c => 'aeiou'.includes(c)).length;\n}",
             "  return s.length;\n}"),
      "cpp": ("    long n = 0;\n    for (char c : s) n += std::string(\"aeiou\").find(c) != std::string::npos;\n    return n;",
              "    return s.size();"),
      "cs": ("        return s.Count(c => \"aeiou\".IndexOf(c) >= 0);",
             "        return s.Length;")}),
    ("JudgeEval_2_double_all", "Return a list with every element of l doubled.",
     {"py": ("from typing import List\n\ndef double_all(l: List[int]) -> List[int]:\n", "double_all"),
      "js": ("function double_all(l){\n", "double_all"),
      "cpp": ("std::vector<long> double_all(std::vector<long> l) {\n", "double_all"),
      "cs": ("    public static List<long> DoubleAll(List<long> l) {\n", "DoubleAll")},
     [({"py": "[1, 2]", "js": "[1, 2]", "cpp": "(std::vector<long>({(long)1, (long)2}))",
        "cs": "(new List<long>(new long[]{(long)1L, (long)2L}))"},
       {"py": "[2, 4]", "js": "[2, 4]", "cpp": "(std::vector<long>({(long)2, (long)4}))",
        "cs": "(new List<long>(new long[]{(long)2L, (long)4L}))"})],
     {"py": ("    return [2 * x for x in l]\n", "    return l\n"),
      "js": ("  return l.map(x => 2 * x);\n}", "  return l;\n}"),
      "cpp": ("    for (auto &x : l) x *= 2;\n    return l;", "    return l;"),
      "cs": ("        return l.Select(x => 2 * x).ToList();", "        return l;")}),
]

STOPS = {"py": ["\ndef", "\n#", "\nif", "\nclass"],
         "js": ["\nfunction ", "\n/*", "\n//", "\nconsole.log"],
         "cpp": ["\n}"], "cs": ["\n    }\n"]}


def prompt(lang, doc, sig, fname, case):
    args, exp = case
    if lang == "py":
        head, rest = (sig.split("\n\n")[0] + "\n\n", sig.split("\n\n")[1]) if "\n\n" in sig else ("", sig)
        return (head + rest + '    """%s\n    >>> %s(%s)\n    %s\n    """\n'
                % (doc, fname, args["py"], exp["py"]))
    if lang == "js":
        return "//%s\n// >>> %s(%s)\n// %s\n%s" % (doc, fname, args["js"], exp["js"], sig)
    if lang == "cpp":
        return ("#include<assert.h>\n#include<bits/stdc++.h>\n// %s\n// >>> %s(%s)\n// %s\n%s"
                % (doc, fname, args["cpp"], exp["cpp"], sig))
    return (CS_USINGS + "class Problem {\n    // %s\n    // >>> %s(%s)\n    // %s\n%s"
            % (doc, fname, args["cs"], exp["cs"], sig))


def tests(lang, fname, cases, prim):
    if lang == "py":
        lines = ["def check(candidate):"] + ["    assert candidate(%s) == %s" % (a["py"], e["py"]) for a, e in cases]
        lines += ["", "def test_check():", "    check(%s)" % fname, "", "test_check()", ""]
    elif lang == "js":
        lines = ["const assert = require('node:assert');", "", "", "function test() {",
                 "  let candidate = %s;" % fname]
        lines += ["  assert.deepEqual(candidate(%s),%s);" % (a["js"], e["js"]) for a, e in cases]
        lines += ["}", "", "test();"]
    elif lang == "cpp":
        lines = ["}", "int main() {", "    auto candidate = %s;" % fname]
        lines += ["    assert(candidate(%s) == %s);" % (a["cpp"], e["cpp"]) for a, e in cases]
        lines += ["}", ""]
    else:
        lines = ["    }", "    public static void Main(string[] args) {"]
        if prim:
            lines += ["    Debug.Assert(%s(%s) == %s);" % (fname, a["cs"], e["cs"]) for a, e in cases]
        else:
            lines += ["    Debug.Assert(%s(%s).Equals(%s));" % (fname, a["cs"], e["cs"]) for a, e in cases]
        lines += ["    }", "", "}", ""]
    return "\n".join(lines)


def completions(lang, right, wrong):
    loop = {"py": "    while True:\n        pass\n", "js": "  while (true) {}\n}",
            "cpp": "    while (true) {}", "cs": "        while (true) {}"}[lang]
    bad = {"py": "    return (\n", "js": "  return );\n}", "cpp": "    return +;",
           "cs": "        return +;"}[lang]
    early = {"py": "    import sys\n    sys.exit(0)\n", "js": "  process.exit(0);\n}",
             "cpp": "    exit(0);", "cs": "        System.Environment.Exit(0); throw new Exception();"}[lang]
    after = {"py": "\n\ndef main():\n    print(42)\n", "js": "\n\nconsole.log(add(1, 2));\nnonsense(",
             "cpp": "\n}\nint main() { junk", "cs": "\n    }\n    junk("}[lang]
    # MultiPL-E's completion begins after the stripped prompt: a newline first
    nl = "" if lang == "py" else "\n"
    return [nl + right, nl + wrong, nl + loop, nl + bad, nl + early, nl + right + after]


def main():
    for lang in ("py", "js", "cpp", "cs"):
        d = os.path.join(HERE, lang)
        os.makedirs(d, exist_ok=True)
        for name, doc, sigs, cases, sols in PROBLEMS:
            sig, fname = sigs[lang]
            prim = "List" not in sig
            obj = {"name": name, "language": lang, "temperature": 0.2, "top_p": 0.95,
                   "max_tokens": 512, "prompt": prompt(lang, doc, sig, fname, cases[0]),
                   "tests": tests(lang, fname, cases, prim),
                   "completions": completions(lang, *sols[lang]), "stop_tokens": STOPS[lang]}
            with open(os.path.join(d, name + ".json"), "w") as f:
                json.dump(obj, f, indent=2)
                f.write("\n")


if __name__ == "__main__":
    main()
