#!/usr/bin/env python3
"""Writes our MBPP fixtures in google-research's published shapes: mbpp.jsonl
(task_id int, text, code with \\r\\n line ends, test_setup_code, test_list,
challenge_test_list) and sanitized-mbpp.json (one JSON array: source_file,
task_id, prompt, code, test_imports, test_list), problems of ours, and
samples.jsonl / samples-sanitized.jsonl ({"task_id", "completion"}, with
"kind" and "passes": what the convention decides)."""
import json
import os

HERE = os.path.dirname(os.path.abspath(__file__))

FULL = [
    {"text": "Write a function to add two numbers.", "code": "def add(a, b):\r\n  return a + b",
     "task_id": 11, "test_setup_code": "",
     "test_list": ["assert add(1, 2) == 3", "assert add(-1, 1) == 0", "assert add(0, 0) == 0"],
     "challenge_test_list": ["assert add(10**20, 1) == 10**20 + 1"]},
    # the setup builds a tree with the sample's own class: it must come after it
    {"text": "Write a function to find the height of a binary tree.",
     "code": "class Node:\r\n  def __init__(self, data):\r\n    self.data = data\r\n    self.left = None\r\n    self.right = None\r\ndef height(node):\r\n  if node is None:\r\n    return 0\r\n  return 1 + max(height(node.left), height(node.right))",
     "task_id": 12,
     "test_setup_code": "root = Node(1)\r\nroot.left = Node(2)\r\nroot.left.left = Node(3)\r\nroot1 = Node(5)",
     "test_list": ["assert height(root) == 3", "assert height(root1) == 1", "assert height(None) == 0"],
     "challenge_test_list": []},
]
FULL_SAMPLES = [
    (11, "canonical", "def add(a, b):\r\n  return a + b", True),
    (11, "wrong", "def add(a, b):\n    return a - b\n", False),
    (11, "float result == int", "def add(a, b):\n    return float(a + b)\n", True),
    (11, "syntax error", "def add(a, b)\n    return a + b\n", False),
    (11, "sys.exit", "import sys\nsys.exit(0)\n", False),
    (11, "main block does not run", "def add(a, b):\n    return a + b\nif __name__ == '__main__':\n    raise SystemExit(1)\n", True),
    (12, "canonical", FULL[1]["code"], True),
    (12, "no Node class (setup needs it)", "def height(node):\n    return 0 if node is None else 1 + max(height(node.left), height(node.right))\n", False),
]
SANITIZED = [
    {"source_file": "Benchmark Questions Verification V2.ipynb", "task_id": 21,
     "prompt": "Write a function to find the area of a circle of radius r.",
     "code": "import math\ndef circle_area(r):\n  return math.pi * r * r",
     "test_imports": ["import math"],
     "test_list": ["assert math.isclose(circle_area(1), 3.141592653589793, rel_tol=0.001)",
                   "assert math.isclose(circle_area(2), 12.566370614359172, rel_tol=0.001)"]},
    {"source_file": "Benchmark Questions Verification V2.ipynb", "task_id": 22,
     "prompt": "Write a function to find the shared elements of two lists.",
     "code": "def shared(a, b):\n  return tuple(set(a) & set(b))",
     "test_imports": [],
     "test_list": ["assert set(shared((3, 4, 5), (5, 7, 4))) == set((4, 5))",
                   "assert set(shared((1, 2), (3,))) == set()"]},
]
SAN_SAMPLES = [
    (21, "canonical without its own import (test_imports bring math)",
     "def circle_area(r):\n  return 3.14159 * r * r", True),
    (21, "wrong", "def circle_area(r):\n  return 2 * r", False),
    (22, "canonical", SANITIZED[1]["code"], True),
    (22, "list, not tuple (set() makes them equal)", "def shared(a, b):\n  return [x for x in a if x in b]", True),
    (22, "endless", "def shared(a, b):\n  while True:\n    pass", False),
]


def main():
    with open(os.path.join(HERE, "mbpp.jsonl"), "w") as f:
        for p in FULL:
            f.write(json.dumps(p) + "\n")
    with open(os.path.join(HERE, "sanitized-mbpp.json"), "w") as f:
        json.dump(SANITIZED, f)
    for name, rows in (("samples.jsonl", FULL_SAMPLES), ("samples-sanitized.jsonl", SAN_SAMPLES)):
        with open(os.path.join(HERE, name), "w") as f:
            for tid, kind, code, passes in rows:
                f.write(json.dumps({"task_id": tid, "completion": code, "kind": kind,
                                    "passes": passes}) + "\n")


if __name__ == "__main__":
    main()
