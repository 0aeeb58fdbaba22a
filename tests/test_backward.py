"""nbtape/backward.py: what the reverse pass promises beyond right values (the memory it
keeps is in test_memory.py): ops know the user's line, keyword arguments reach the rules
as plain values, and VJPs run only for operands on the gradient path."""
import inspect

import numpy as np

import nbtape as nt
from nbtape.rules.core_ops import primitive
from nbtape.rules.registry import RULES, defvjp


def test_an_op_knows_the_users_line_that_ran_it():
    x = nt.constant(2.0)
    with nt.GradientTape() as tape:
        tape.watch(x)
        y = np.sin(x)
        line = inspect.currentframe().f_lineno - 1
    op = tape._ops[-1]
    assert op.where == (__file__, line, "test_an_op_knows_the_users_line_that_ran_it")
    assert op.where == (__file__, line, "test_an_op_knows_the_users_line_that_ran_it")  # kept
    assert float(tape.gradient(y, x)) == np.cos(2.0)


def test_keyword_arguments_reach_the_rules_as_plain_values():
    x = nt.constant(np.arange(6.0).reshape(2, 3))
    with nt.GradientTape() as tape:
        tape.watch(x)
        y = np.sum(np.sum(x ** 2, axis=1, keepdims=True) * np.array([[1.0], [2.0]]))
    g = tape.gradient(y, x)
    assert type(g.numpy()) is np.ndarray
    np.testing.assert_array_equal(g.numpy(), 2 * x.numpy() * np.array([[1.0], [2.0]]))


def test_vjps_run_only_for_operands_on_the_gradient_path():
    calls = []

    def counted(name, vjp):
        def run(*a):
            calls.append(name)
            return vjp(*a)
        return run

    def scale(x, y):
        return x * y
    f = primitive(scale)
    try:
        defvjp(f.raw, counted("x", lambda g, ans, x, y: g * y),
               counted("y", lambda g, ans, x, y: g * x))
        x, y = nt.constant(2.0), nt.constant(3.0)
        with nt.GradientTape(persistent=True) as tape:
            tape.watch(x)
            z = f(x, y)
        assert float(tape.gradient(z, x)) == 3.0 and calls == ["x"]   # y is not watched
        tape.watch(y)
        assert tape.gradient(z, y) is None and calls == ["x"]   # watched after use: no path
    finally:
        del RULES[f.raw]
