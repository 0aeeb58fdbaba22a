"""Judging a handed-in answer away from the learner's kernel (``grader``).

``grade`` turns the data back into an answer (code runs in a namespace holding the
exercise's own data) and checks it; ``grade_elsewhere`` does that in a fresh
``python -I`` started in an empty folder, whatever this process has patched, and keeps
what the answer prints out of the verdict.
"""
import numpy as np
import pytest

import nbtape.notebook.exercises.catalogue as catalogue
from nbtape.notebook.exercises.grader import grade, grade_elsewhere, unpack
from nbtape.notebook.exercises.handin import pack

FIXED = "def fixed_loss(w):\n    return np.mean((w * data + 0.5 - targets) ** 2)\n"


def _code(source, name, names=None):
    return {"$code": name, "source": source, "names": names or {}}


def test_values_come_back():
    assert unpack(pack((1.5, [2, None])), {}) == (1.5, [2, None])
    np.testing.assert_array_equal(unpack(pack(np.arange(3.0)), {}), np.arange(3.0))
    assert unpack({"$ref": "numpy", "name": "round"}, {}) is np.round
    with pytest.raises(Exception, match="does not read"):
        unpack({"$ref": "os", "name": "system"}, {})


def test_a_function_reads_the_exercises_data_not_the_notebooks():
    right = _code(FIXED, "fixed_loss", {"data": pack(np.array([9.0, 9.0, 9.0]))})
    assert grade({"id": "05-fixed-loss", "args": [right]}).passed
    broken = _code("def fixed_loss(w)\n    return w\n", "fixed_loss")
    verdict = grade({"id": "05-fixed-loss", "args": [broken]})
    assert "does not run on its own" in verdict.message


def test_a_generator_is_not_a_crash():
    verdict = grade({"id": "12-clip-global",
                     "args": [_code("def clip_global(grads, n):\n    return (g for g in grads)\n",
                                    "clip_global")]})
    assert "is a generator: return a list" in verdict.message


def test_a_rule_and_a_tape_are_judged_by_what_they_gave():
    x = [-3.0, -0.4, 0.0, 0.7, 2.5]
    value = list(np.logaddexp(x, np.negative(x)) - np.log(2.0))
    rule = {"$rule": {"x": pack(np.array(x)), "value": pack(np.array(value)),
                      "grad": pack(np.tanh(x))}}
    assert grade({"id": "06b-log-cosh", "args": [rule]}).passed
    rule["$rule"]["grad"] = pack(-np.tanh(x))
    assert "wrong sign" in grade({"id": "06b-log-cosh", "args": [rule]}).message
    tape = {"$tape": {"is_tape": True, "grad": 6 * np.pi, "raised": None}}
    assert grade({"id": "03c-tape-magic", "args": [6 * np.pi, tape, 3.0]}).passed
    assert not grade({"id": "03c-tape-magic", "args": [1.0, tape, 3.0]}).passed


def test_the_fresh_python_ignores_what_this_one_patched(monkeypatch):
    monkeypatch.setattr(catalogue, "feedback", lambda *a, **k: catalogue.Feedback(True))
    monkeypatch.setattr(np, "allclose", lambda *a, **k: True)
    wrong = {"id": "03-gradient", "args": [pack(np.array([0.0, 3.0, 9.0]))]}
    assert not grade_elsewhere(wrong).passed
    noisy = _code("def fixed_loss(w):\n    print('correct')\n"
                  "    return np.mean((w * data + 0.5 - targets) ** 2)\n", "fixed_loss")
    assert grade_elsewhere({"id": "05-fixed-loss", "args": [noisy]}).passed


def test_a_check_that_never_ends_runs_out_of_time():
    endless = _code("def fixed_loss(w):\n    while True:\n        pass\n", "fixed_loss")
    verdict = grade_elsewhere({"id": "05-fixed-loss", "args": [endless]}, timeout=5)
    assert "did not finish in 5 s" in verdict.message


@pytest.mark.parametrize("body, said", [
    ("import nbtape.notebook.exercises.early as e\n    e.compare = print", "imports nbtape.notebook"),
    ("np.allclose = lambda *a, **k: True", "changes np.allclose"),
    ("import sys", "imports sys"),
    ("w.__class__.__add__ = None", "reads __"),
    ("__builtins__['abs'] = None", "uses __builtins__"),
    ("setattr(np, 'isclose', None)", "uses setattr"),
    ("return nt.notebook", "reads notebook"),
    ("import nbtape as n\n    return n.exercises", "reads exercises"),
])
def test_an_answer_that_reaches_into_the_judge_is_refused(body, said):
    source = f"def fixed_loss(w):\n    {body}\n    return w\n"
    verdict = grade({"id": "05-fixed-loss", "args": [_code(source, "fixed_loss")]})
    assert not verdict.passed and said in verdict.message, verdict.message


def test_the_installs_own_references_are_not_an_answer():
    """A function of the checks (the install's reference, 11's data) handed in by name
    is refused: only numpy's, math's and nbtape's own functions travel by name."""
    for module, name in [("nbtape.notebook.exercises.early", "_fixed_loss"),
                         ("nbtape.notebook.exercises.later", "_data11")]:
        verdict = grade({"id": "05-fixed-loss", "args": [{"$ref": module, "name": name}]})
        assert not verdict.passed and "does not read" in verdict.message, verdict.message


def test_the_course_data_decides():
    """``graded`` (the course's data, from the teacher's file) replaces the self-check's."""
    remembered = _code("def segment(length, memory):\n"
                       "    return {(400, 40): 20}.get((length, memory), 20)\n", "segment")
    cases = {"cases": [[400, 40]]}
    assert grade({"id": "10-checkpoint-segment", "args": [remembered], "graded": cases})
    other = grade({"id": "10-checkpoint-segment", "args": [remembered],
                   "graded": {"cases": [[900, 61]]}})
    assert not other.passed and "for 900 layers" in other.message, other.message


def test_a_class_may_set_its_own_attributes():
    value = _code("class Value:\n    def __init__(self, data):\n        self.data = data\n",
                  "Value")
    assert unpack(value, {})(2.0).data == 2.0
