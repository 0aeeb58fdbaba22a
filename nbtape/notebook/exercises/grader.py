"""Judging a handed-in answer in a fresh Python, away from the learner's kernel.

``grade(data)`` turns what ``handin.pack`` wrote back into an answer (values as
values; functions and classes by running their source in a namespace that holds the
exercise's own data, never the notebook's) and runs the exercise's check on it.
``grade_elsewhere(data)`` does that in a new ``python -I`` process started from this
installation (the teacher's), from an empty folder, and reads the verdict back: what
the learner's kernel did to the checker, numpy, builtins or the import system stays
in that kernel.  ``python -m nbtape.notebook.exercises.grader`` (``judge_stdin``) is that process: JSON
in on stdin, the verdict out as one JSON line.
"""
import contextlib
import io
import json
import math
import os
import subprocess
import sys
import tempfile
import textwrap

import numpy as np

import nbtape as nt

from ...diagnostics.user_line import PACKAGE_DIR
from .catalogue import feedback
from .early import DATA_05, DATA_05B
from .feedback import Feedback, NotYet

# What an answer may read from its notebook besides np, nt and math: the exercise's
# given data, the check's copy (a learner's changed copy never travels in its place).
GIVEN = {
    "05-fixed-loss": {"data": DATA_05, "targets": 2 * DATA_05},
    "05b-fixed-loss": {"data": DATA_05B},
}
TIMEOUT = 300


def unpack(data, namespace):
    """An answer from ``handin.pack``'s data; code runs in ``namespace``.

    >>> unpack({"$tuple": [1.5, {"$array": [1.0, 2.0], "dtype": "float64"}]}, {})
    (1.5, array([1., 2.]))
    >>> type(unpack({"$other": "generator"}, {})).__name__
    'generator'
    """
    if not isinstance(data, dict):
        return data
    if "$array" in data:
        return np.array(data["$array"], dtype=data.get("dtype", "float64"))
    if "$float" in data:
        return float(data["$float"])
    if "$list" in data:
        return [unpack(v, namespace) for v in data["$list"]]
    if "$tuple" in data:
        return tuple(unpack(v, namespace) for v in data["$tuple"])
    if "$module" in data:
        return __import__(data["$module"], fromlist=["_"])
    if "$ref" in data:
        return _library(data["$ref"], data["name"])
    if "$code" in data:
        return _code(data, namespace)
    if "$rule" in data:
        return _rule(data["$rule"], namespace)
    if "$raised" in data:
        return _raising(data["$raised"])
    if "$tape" in data:
        return {k: unpack(v, namespace) for k, v in data["$tape"].items()}
    if "$other" in data:
        return type(str(data["$other"]), (), {"__repr__": lambda self: data["$other"]})()
    raise NotYet("the handed-in answer is not in a form the grader reads")


def _library(module, name):
    """A library's own function, by name (only numpy, nbtape, math and builtins)."""
    from .handin import LIBRARIES
    if module.split(".")[0] not in LIBRARIES or module.startswith("nbtape.notebook"):
        raise NotYet(f"the answer names {module}.{name}, which the grader does not read")
    found = __import__(module, fromlist=["_"])
    for part in name.split("."):
        found = getattr(found, part)
    return found


# What an answer's code may import, and the names and attributes it may not touch: code
# that computes an answer needs none of them, and code that reaches into the judge does.
IMPORTABLE = {"numpy", "math", "nbtape", "functools", "itertools", "collections", "typing"}
FORBIDDEN = {"__import__", "eval", "exec", "compile", "globals", "locals", "vars", "open",
             "setattr", "delattr", "getattr", "breakpoint", "input", "__builtins__",
             "builtins", "sys", "os", "importlib", "gc", "inspect", "ctypes", "subprocess"}
# attributes that lead to the checks (nt.notebook.exercises: their data and references)
# or to the judge's frames (where the course's graded data sits)
OFF_LIMITS = {"notebook", "exercises", "f_back", "f_globals", "f_locals", "f_builtins",
              "gi_frame", "cr_frame", "ag_frame", "tb_frame"}


def screen(source, name):
    """``NotYet`` when the answer's code imports beyond numpy and math, touches the
    interpreter (``sys``, ``builtins``, ``setattr``, a dunder attribute) or assigns to a
    module's attribute (``np.allclose = ...``); else nothing.

    >>> screen("def f(w):\\n    return np.sum(w ** 2)", "f")
    >>> screen("def f(w):\\n    np.allclose = lambda *a: True\\n    return w", "f")
    Traceback (most recent call last):
    ...
    nbtape.notebook.exercises.feedback.NotYet: the code of f changes np.allclose: the graded course accepts code that computes the answer, and nothing else
    """
    import ast
    tree = ast.parse(textwrap.dedent(source))
    modules = {"np", "nt", "math", "numpy", "nbtape"}
    for node in ast.walk(tree):
        said = None
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            names = [node.module or ""] if isinstance(node, ast.ImportFrom) else \
                [a.name for a in node.names]
            bad = [n for n in names if n.split(".")[0] not in IMPORTABLE
                   or n.startswith("nbtape.notebook")]
            if bad:
                said = f"imports {bad[0]}"
            modules.update(a.asname or a.name.split(".")[0] for a in node.names)
        elif isinstance(node, ast.Name) and node.id in FORBIDDEN:
            said = f"uses {node.id}"
        elif isinstance(node, ast.Attribute) and (node.attr in OFF_LIMITS or (
                node.attr.startswith("__") and node.attr not in ("__init__", "__name__"))):
            said = f"reads {node.attr}"
        elif isinstance(node, (ast.Assign, ast.AugAssign, ast.Delete)):
            targets = node.targets if isinstance(node, (ast.Assign, ast.Delete)) \
                else [node.target]
            for target in targets:
                root = target
                while isinstance(root, ast.Attribute):
                    root = root.value
                if target is not root and isinstance(root, ast.Name) and root.id in modules:
                    said = f"changes {ast.unparse(target)}"
        if said:
            raise NotYet(f"the code of {name} {said}: the graded course accepts code that "
                         "computes the answer, and nothing else")


def _code(data, namespace):
    """A function or a class from its source, its notebook names put in first."""
    for key, value in data.get("names", {}).items():
        namespace.setdefault(key, unpack(value, namespace))
    name = data["$code"]
    try:
        screen(data["source"], name)
    except SyntaxError:
        pass                                # said below, when the source is run
    before = dict(namespace)
    try:
        exec(compile(textwrap.dedent(data["source"]), f"<{name}>", "exec"), namespace)
    except Exception as error:              # the learner's source: say what it raised
        raise NotYet(f"the source of {name} does not run on its own in a fresh Python "
                     f"({type(error).__name__}: {error}): define it in one cell, from "
                     "the notebook's names") from None
    if name.isidentifier() and callable(namespace.get(name)):
        return namespace[name]
    made = [v for k, v in namespace.items() if callable(v) and before.get(k) is not v]
    if len(made) != 1:
        raise NotYet(f"the grader cannot tell which function {name} is: define it "
                     "with def in its own cell")
    return made[0]


def _rule(data, namespace):
    """06b: a primitive that gives back what the learner's log_cosh gave at the check's
    points (its values, its rule's gradients), nothing anywhere else."""
    from ...extend import defderiv, primitive
    x, value, grad = (unpack(data[k], namespace) for k in ("x", "value", "grad"))

    def at(table, point):
        point = np.asarray(point, dtype=float)
        if table is None or point.shape != np.shape(x) or not np.array_equal(point, x):
            return np.full(point.shape, np.nan)
        return np.asarray(table, dtype=float)

    @primitive
    def log_cosh(point):
        return at(value, point)

    if grad is not None:
        defderiv(log_cosh, lambda ans, point: at(grad, point))
    return log_cosh


def _raising(message):
    def raised(*args, **kwargs):
        raise RuntimeError(message)
    return raised


def _judge_tape(answer, disc, r):
    """03c: ``disc``'s gradient at the notebook's r = 3, and ``answer`` read from it."""
    if not disc["is_tape"]:
        raise NotYet("`disc` should be the tape that the %%tape cell made")
    if disc["raised"]:
        raise NotYet(f"disc.gradient(area, r) raised {disc['raised']}")
    if disc["grad"] is None:
        raise NotYet("the tape disc does not follow r: add --watch r to the %%tape line")
    if not np.isclose(float(np.asarray(disc["grad"])), 2 * np.pi * 3.0):
        raise NotYet("the tape's gradient is not d(area)/dr of area = pi r ** 2 at r = 3: "
                     "is the cell's second line still as required?")
    if answer is None:
        raise NotYet("`answer` is still None: the exercise asks for d(area)/dr as a float")
    try:
        got = float(np.asarray(answer, dtype=float).reshape(()))
    except (TypeError, ValueError):
        raise NotYet(f"`answer` should be one number, not a {type(answer).__name__}") \
            from None
    if not np.isclose(got, 2 * np.pi * 3.0):
        raise NotYet("`answer` is not the gradient that the tape disc gives: read it "
                     "with disc.gradient(area, r)")


JUDGES = {"03c-tape-magic": _judge_tape}


def grade(data):
    """The verdict on a handed-in answer, as a ``Feedback``; nothing is printed.

    ``data["graded"]``, when there, is the course's own data for the check (``variants``:
    the autograde step puts it in from the teacher's file, never from the hand-in).

    >>> grade({"id": "03-gradient", "args": [{"$array": [-1.0, 2.0, 8.0]}]})
    correct
    """
    id = data.get("id")
    namespace = {"np": np, "nt": nt, "math": math, "__name__": "__answer__"}
    namespace.update(GIVEN.get(id, {}))
    try:
        args = [unpack(a, namespace) for a in data.get("args", [])]
        for key, value in GIVEN.get(id, {}).items():
            namespace[key] = value          # the exercise's data, whatever came with it
        if id in JUDGES:
            JUDGES[id](*args)
            return Feedback(True)
    except NotYet as reason:
        return Feedback(False, str(reason))
    return feedback(id, *args, **(data.get("graded") or {}))


def grade_elsewhere(data, timeout=TIMEOUT):
    """``grade(data)`` in a fresh ``python -I`` from this installation; a ``Feedback``.

    The new process starts in an empty folder (no learner's file shadows a module)
    and reads nbtape from where this one did.
    """
    root = os.path.dirname(os.path.dirname(PACKAGE_DIR))     # the folder holding nbtape/
    start = ("import sys; sys.path.insert(0, sys.argv[1]); "
             "from nbtape.notebook.exercises.grader import judge_stdin; sys.exit(judge_stdin())")
    with tempfile.TemporaryDirectory() as empty:
        try:
            done = subprocess.run([sys.executable, "-I", "-c", start, root],
                                  input=json.dumps(data), capture_output=True, text=True,
                                  timeout=timeout, cwd=empty)
        except subprocess.TimeoutExpired:
            return Feedback(False, f"the check did not finish in {timeout} s: does a loop "
                                   "in the answer never end?")
    lines = done.stdout.strip().splitlines()
    try:
        verdict = json.loads(lines[-1])
        return Feedback(bool(verdict["passed"]), str(verdict["message"]))
    except (IndexError, ValueError, KeyError, TypeError):
        tail = " ".join(done.stderr.strip().splitlines()[-1:])
        return Feedback(False, f"the grader could not judge this answer ({tail or 'no verdict'})")


def judge_stdin():
    """Read one handed-in answer (JSON) on stdin, write its verdict as one JSON line."""
    data = json.loads(sys.stdin.read())
    out = os.fdopen(os.dup(1), "w")
    with open(os.devnull, "w") as sink:
        os.dup2(sink.fileno(), 1)           # what the answer prints is not the verdict
        with contextlib.redirect_stdout(io.StringIO()):
            try:
                verdict = grade(data)
            except Exception as error:      # never a crash: say what happened
                verdict = Feedback(False, f"the check raised {type(error).__name__}: "
                                          f"{error}")
    out.write(json.dumps({"passed": verdict.passed, "message": verdict.message}) + "\n")
    out.flush()
    return 0


if __name__ == "__main__":
    sys.exit(judge_stdin())
