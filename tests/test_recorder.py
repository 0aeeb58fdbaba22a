"""The ``Recorder`` protocol (nbtape/core/recorder.py): every class that goes on the
recording stack implements every hook, with the protocol's parameters.

The implementers are found from the source (any class of nbtape defining one of the
hooks), so a new recorder that forgets a hook, or spells a parameter differently, fails
here rather than deep inside dispatch.
"""
import ast
import inspect
import pathlib

import numpy as np
import pytest

import nbtape as nt
from nbtape.core.recorder import Recorder
from nbtape.core.state import suspended, tls

PACKAGE = pathlib.Path(nt.__file__).resolve().parent
HOOKS = ("record", "on_variable_read", "note_escape", "on_assign")


def _hook_classes():
    """``{(module, class name)}`` of every class in nbtape that defines a hook."""
    found = set()
    for path in PACKAGE.rglob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef) and node.name != "Recorder":
                defs = {n.name for n in node.body            # methods, not properties
                        if isinstance(n, ast.FunctionDef) and not n.decorator_list}
                # on_assign alone is also an observer's hook name (a widget's row)
                if defs & {"record", "on_variable_read", "note_escape"}:
                    rel = path.relative_to(PACKAGE.parent).with_suffix("").parts
                    module = ".".join(rel[:-1] if rel[-1] == "__init__" else rel)
                    found.add((module, node.name))
    return found


def _parameters(fn):
    return [p for p in inspect.signature(fn).parameters if p != "self"]


def test_the_recorders_are_the_seven_the_protocol_names():
    assert _hook_classes() == {
        ("nbtape.core.recorder", "Listener"),       # the no-op base some of them extend
        ("nbtape.tape.check_numerics", "_Checking"),
        ("nbtape.tape.gradient_tape", "GradientTape"),
        ("nbtape.tape.gradient_tape", "_Paused"),
        ("nbtape.tape.forward", "ForwardAccumulator"),
        ("nbtape.transforms.recompute", "_Reads"),
        ("nbtape.transforms.custom", "_VariableWatcher"),
        ("nbtape.transforms.trace", "Tracer"),
    }


@pytest.mark.parametrize("module, name", sorted(_hook_classes()))
def test_each_recorder_implements_every_hook_with_the_protocols_parameters(module, name):
    import importlib
    cls = getattr(importlib.import_module(module), name)
    for hook in HOOKS:
        assert callable(getattr(cls, hook, None)), f"{name} has no {hook}"
        ours = _parameters(getattr(Recorder, hook))
        theirs = _parameters(getattr(cls, hook))
        # a recorder that takes everything (*args) accepts any call the engine makes
        if [inspect.signature(getattr(cls, hook)).parameters[p].kind for p in theirs] == \
                [inspect.Parameter.VAR_POSITIONAL]:
            continue
        assert len(theirs) == len(ours), (name, hook, theirs, ours)
    assert "paused" in dir(cls), f"{name} does not say whether it stands in for a paused tape"


def test_the_live_recorders_are_recorders_and_the_paused_stand_in_names_its_tape():
    x = nt.constant(2.0)
    tape = nt.GradientTape()
    acc = nt.ForwardAccumulator(x, nt.constant(1.0))
    assert isinstance(tape, Recorder) and isinstance(acc, Recorder)
    assert tape.paused is None and acc.paused is None
    with tape:
        tape.watch(x)
        with tape.stop_recording():
            stand_in, = tls.stack
            assert isinstance(stand_in, Recorder)
            assert stand_in.paused is tape and stand_in is not tape
            with suspended(tape):       # finds the tape through its stand-in
                assert tls.stack == []
            y = x * x                   # noted, not recorded
        assert tls.stack == [tape]
    assert len(tape) == 0 and [n.kind for n in tape.notes] == ["stop_recording"]
    assert tape.gradient(y, x) is None


def test_a_class_missing_a_hook_is_not_a_recorder():
    class Half:
        paused = None

        def record(self, rule, args, kwargs, operands, ids, outs):
            pass

    assert not isinstance(Half(), Recorder)
    assert isinstance(np.zeros(1), Recorder) is False
