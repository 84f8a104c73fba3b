#!/usr/bin/env python3
"""An agent loop against the judge: ask a model for a program, grade it, feed
the verdict back, stop when accepted or after --attempts tries.

Python 3 standard library only. Two ways to grade:

  inline task:  --stdin / --expected (and --statement for the model)
                -> POST /v1/execute_with_expected
  problem:      --problem ID
                -> POST /v1/submissions, then GET /v1/submissions/{id}?wait=

The model is anything with one method, ``propose(task, feedback) -> source``
(see ``Model``). This file ships ``ScriptedModel``, a stand-in that returns
canned answers in order; a real model client goes in ``make_model`` (see the
comment there). examples/README.md shows how to run it.
"""

import argparse
import json
import os
import sys
import time
import urllib.error
import urllib.request

FINAL = {"accepted", "wrong_answer", "timeout", "memory_limit", "output_limit",
         "runtime_error", "compile_error", "internal_error", "completed", "cancelled"}


# ---------------------------------------------------------------- the model

class Model:
    """What the loop needs from a model: one method.

    ``task`` is a dict: ``statement``, ``language`` and, for an inline task,
    ``stdin`` and ``expected_output`` (for a problem, ``problem``).
    ``feedback`` is the list of what the judge said about each earlier attempt,
    oldest first; each item is a dict with ``attempt``, ``status``,
    ``message`` (``feedback.message`` of the result), ``stderr``,
    ``compile_output`` and ``text`` (all of it as one string for a prompt).
    Return the source of the next program.
    """

    def propose(self, task, feedback):
        raise NotImplementedError


class ScriptedModel(Model):
    """A stand-in for a model: returns ``answers`` in order and records the
    feedback it was given at each call (``self.calls``)."""

    def __init__(self, answers):
        self.answers = list(answers)
        self.calls = []

    def propose(self, task, feedback):
        n = len(self.calls)
        self.calls.append([dict(f) for f in feedback])
        if n >= len(self.answers):
            raise RuntimeError("ScriptedModel: no answer left for call %d" % (n + 1))
        return self.answers[n]


def make_model(args):
    """Builds the model named by --model.

    A real model goes here: write a class with ``propose(task, feedback)``
    that puts ``task["statement"]`` and each ``feedback[i]["text"]`` into a
    prompt, calls your model's API (urllib.request is enough for an HTTP API;
    read its key from the environment) and returns the program's source
    (strip Markdown fences from the reply). Then return an instance of it
    here for ``--model NAME``. This example makes no network call to any model.
    """
    if args.model == "scripted":
        if not args.answers:
            sys.exit("agent_loop: --model scripted needs --answers FILE... (one program each)")
        answers = []
        for path in args.answers:
            with open(path, encoding="utf-8") as f:
                answers.append(f.read())
        return ScriptedModel(answers)
    sys.exit("agent_loop: unknown model %r (only 'scripted' ships; see make_model)" % args.model)


# ---------------------------------------------------------------- the judge

class JudgeError(Exception):
    pass


class Judge:
    def __init__(self, url, key, timeout=120):
        self.url = url.rstrip("/")
        self.key = key
        self.timeout = timeout

    def _call(self, method, path, body=None):
        data = None
        headers = {"Accept": "application/json"}
        if self.key:
            headers["Authorization"] = "Bearer " + self.key
        if body is not None:
            data = json.dumps(body).encode("utf-8")
            headers["Content-Type"] = "application/json"
        req = urllib.request.Request(self.url + path, data=data, method=method,
                                     headers=headers)
        try:
            with urllib.request.urlopen(req, timeout=self.timeout) as r:
                return r.status, json.loads(r.read().decode("utf-8"))
        except urllib.error.HTTPError as e:
            text = e.read().decode("utf-8", "replace")
            try:
                err = json.loads(text).get("error", {})
                text = "%s: %s" % (err.get("code"), err.get("message"))
            except (ValueError, AttributeError):
                pass
            raise JudgeError("%s %s -> %d %s" % (method, path, e.code, text)) from None

    def wait(self, sid):
        """GET /v1/submissions/{id}?wait= until final; returns its result JSON."""
        while True:
            _, sub = self._call("GET", "/v1/submissions/%d?wait=30" % sid)
            if sub.get("status") in FINAL and sub.get("result") is not None:
                result = dict(sub["result"])
                result.setdefault("status", sub["status"])
                result["id"] = sid
                return result
            time.sleep(0.2)

    def execute_with_expected(self, language, source, stdin, expected):
        status, res = self._call("POST", "/v1/execute_with_expected", {
            "language": language, "source": source,
            "stdin": stdin, "expected_output": expected})
        if status == 202:  # still running after max_wait_s
            return self.wait(res["id"])
        return res

    def submit_problem(self, problem, language, source):
        _, res = self._call("POST", "/v1/submissions", {
            "problem": problem, "language": language, "source": source})
        return self.wait(res["id"])


# ---------------------------------------------------------------- the loop

def feedback_of(attempt, result):
    """What the model is told about one graded attempt."""
    fb = {
        "attempt": attempt,
        "status": result.get("status"),
        "message": (result.get("feedback") or {}).get("message", ""),
        "stderr": result.get("stderr") or "",
        "compile_output": (result.get("compile") or {}).get("output") or "",
    }
    lines = ["Attempt %d: verdict %s." % (attempt, fb["status"])]
    if fb["message"]:
        lines.append("Judge: " + fb["message"])
    if fb["compile_output"]:
        lines.append("Compiler output:\n" + fb["compile_output"].rstrip())
    if fb["stderr"]:
        lines.append("Stderr:\n" + fb["stderr"].rstrip())
    fb["text"] = "\n".join(lines)
    return fb


def run_loop(judge, model, task, attempts, log=print):
    """Returns (accepted, [{attempt, status, message, feedback_given}, ...])."""
    feedback = []
    history = []
    for n in range(1, attempts + 1):
        given = [dict(f) for f in feedback]
        source = model.propose(task, feedback)
        if "problem" in task:
            result = judge.submit_problem(task["problem"], task["language"], source)
        else:
            result = judge.execute_with_expected(task["language"], source,
                                                 task["stdin"], task["expected_output"])
        fb = feedback_of(n, result)
        history.append({"attempt": n, "status": fb["status"], "id": result.get("id"),
                        "message": fb["message"], "feedback_given": given})
        log("attempt %d: %s%s" % (n, fb["status"],
                                  " (" + fb["message"] + ")" if fb["message"] else ""))
        if fb["status"] == "accepted":
            return True, history
        feedback.append(fb)
    return False, history


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--url", default=os.environ.get("JUDGE_URL", "http://127.0.0.1:8080"),
                   help="judge base URL (env JUDGE_URL)")
    p.add_argument("--key", default=os.environ.get("JUDGE_API_KEY", ""),
                   help="API key jk_... (env JUDGE_API_KEY)")
    p.add_argument("--language", default="python")
    p.add_argument("--statement", default="", help="the task, for the model")
    p.add_argument("--stdin", default="")
    p.add_argument("--expected", help="expected output (inline task)")
    p.add_argument("--problem", help="a problem id instead of stdin/expected")
    p.add_argument("--attempts", type=int, default=5)
    p.add_argument("--model", default="scripted")
    p.add_argument("--answers", nargs="*", default=[],
                   help="scripted model: files, one program each, returned in order")
    p.add_argument("--json", action="store_true",
                   help="print one JSON log at the end (attempts, what the model was told)")
    args = p.parse_args(argv)

    task = {"statement": args.statement, "language": args.language}
    if args.problem:
        task["problem"] = args.problem
    elif args.expected is not None:
        task["stdin"] = args.stdin
        task["expected_output"] = args.expected
    else:
        p.error("give --expected (with --stdin) or --problem")

    model = make_model(args)
    judge = Judge(args.url, args.key)
    say = (lambda s: print(s, file=sys.stderr)) if args.json else print
    try:
        accepted, history = run_loop(judge, model, task, args.attempts, log=say)
    except JudgeError as e:
        print("agent_loop: judge refused: %s" % e, file=sys.stderr)
        return 2
    say("accepted after %d attempts" % len(history) if accepted
        else "not accepted after %d attempts" % len(history))
    if args.json:
        out = {"accepted": accepted, "attempts": history}
        if isinstance(model, ScriptedModel):
            out["model_calls"] = model.calls  # what the model itself recorded
        print(json.dumps(out, indent=1))
    return 0 if accepted else 1


if __name__ == "__main__":
    sys.exit(main())
