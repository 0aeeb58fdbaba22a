"""Handing an answer in: what a strict check cell puts in its output, as plain JSON.

Numbers and arrays travel by value, functions and classes by their source with the
notebook names they read (a library's function by its name), and anything else by its
type's name only; the cell's output holds the data for the course's grader.  A class
defined in a notebook cell is found through its methods (``inspect`` cannot).
"""
import json

import numpy as np
import pytest
from IPython.core.interactiveshell import InteractiveShell

import nbtape as nt
from nbtape.notebook.exercises.handin import MIME, hand_in, lambda_source, pack

SCALE = 3.0


def _scaled(w):
    return SCALE * _helper(w)


def _helper(w):
    return w + 1


def test_values_travel_by_value():
    data = pack((1, 2.5, "np.log", None, True, nt.constant([1.0, 2.0]), [np.float32(0.5)]))
    assert json.loads(json.dumps(data)) == {"$tuple": [
        1, 2.5, "np.log", None, True, {"$array": [1.0, 2.0], "dtype": "float64"},
        {"$list": [0.5]}]}
    assert pack(float("nan")) == {"$float": "nan"}
    assert pack(np.array(["a"])) == {"$other": "array of <U1"}


def test_functions_travel_by_source_with_the_names_they_read():
    data = pack(_scaled)
    assert data["$code"] == "_scaled" and data["source"].startswith("def _scaled(w):")
    assert data["names"]["SCALE"] == 3.0
    assert data["names"]["_helper"]["source"].startswith("def _helper(w):")
    assert pack(np.round) == {"$ref": "numpy", "name": "round"}
    double = lambda v: 2 * v                            # noqa: E731 (a lambda is the point)
    assert lambda_source(double) == "lambda v: 2 * v"
    assert pack(double)["source"] == "__answer__ = lambda v: 2 * v"


def test_iterators_and_objects_travel_as_their_kind():
    assert pack(map(abs, [1])) == {"$other": "map"}
    assert pack(object()) == {"$other": "object"}


@pytest.fixture
def shell():
    shell = InteractiveShell.instance()
    yield shell
    InteractiveShell.clear_instance()


def test_a_class_from_a_notebook_cell_and_the_cells_output(shell):
    shell.run_cell("class Value:\n    def __init__(self, data):\n        self.data = data\n")
    shell.run_cell("import nbtape as nt\nfrom nbtape.notebook.exercises.handin import pack\n"
                   "packed = pack(Value)")
    packed = shell.user_ns["packed"]
    assert packed["$code"] == "Value" and packed["source"].startswith("class Value:")
    shown = []
    shell.display_pub.publish = lambda data, **kwargs: shown.append(data)
    shell.run_cell('nt.exercises.check("09-buggy", "swish", None, strict=True)')
    assert shown and shown[0][MIME] == {"id": "09-buggy", "args": ["swish", None]}


def test_hand_in_outside_a_notebook_returns_the_data():
    assert hand_in("13-closer-to", ("relu", 1.5)) == {"id": "13-closer-to",
                                                      "args": ["relu", 1.5]}
