"""nbtape/diagnostics/user_line.py: finding the user's line for an op, a note or an error.

The engine tells its own frames from the user's by one root, ``PACKAGE_DIR`` (the
folder of ``nbtape/__init__.py``), which every module takes from ``user_line``.  After
the engine moved into subpackages, a module that judged its frames by its own place
would name one of nbtape's lines (or the caller's caller) instead of the user's: the
tests below record every kind of op, note and error from this file and check that each
names this file and the exact line, found by the ``# @tag`` comment at its end.
"""
import ast
import linecache
import os
import sys
import traceback
import warnings
from pathlib import Path

import numpy as np
import pytest

import nbtape as nt
from nbtape.diagnostics import user_line
from nbtape.diagnostics.errors import InvalidArgumentError, NbtapeError, without_nbtape_tail
from nbtape.diagnostics.user_line import (
    LazyWhere, PACKAGE_DIR, caller, caller_raw, decode, describe, source_line)
from nbtape.extend import defvjp, primitive, unregister
from gradcheck import nbtape_frames

HERE = os.path.basename(__file__)
PACKAGE = Path(nt.__file__).resolve().parent          # found apart from user_line


def line_of(tag):
    """The line of this file that ends with the comment ``# @tag``."""
    for n, text in enumerate(Path(__file__).read_text().splitlines(), 1):
        if text.rstrip().endswith(f"# @{tag}"):
            return n
    raise LookupError(tag)


def at(tag, function):
    """The ``where`` triple of the line tagged ``tag``, inside ``function``."""
    return (__file__, line_of(tag), function)


def named(tag):
    """How messages name the tagged line: 'line N of test_user_line.py'."""
    return f"line {line_of(tag)} of {HERE}"


def op_named(tape, name):
    ops = [op for op in tape.ops if op.name == name]
    assert len(ops) == 1, [op.name for op in tape.ops]
    return ops[0]


def last_user_frame(exc):
    """(file, line) of the last frame of ``exc``'s traceback outside nbtape, and the
    files of the frames after it (the user_facing wrapper that re-raised, if any)."""
    frames = traceback.extract_tb(exc.__traceback__)
    outside = [k for k, f in enumerate(frames)
               if not Path(f.filename).resolve().is_relative_to(PACKAGE)]
    last = frames[outside[-1]]
    return (last.filename, last.lineno), [f.filename for f in frames[outside[-1] + 1:]]


def assert_raised_from(exc, tag):
    where, after = last_user_frame(exc)
    assert where == (__file__, line_of(tag))
    # nothing of the engine below the user's line but the wrapper that re-raised it
    assert not nbtape_frames(exc), nbtape_frames(exc)
    assert all(os.path.basename(f) == "errors.py" for f in after), after
    trimmed = traceback.extract_tb(without_nbtape_tail(exc.__traceback__))
    assert (trimmed[-1].filename, trimmed[-1].lineno) == where


# --- (a) one root for "is this frame nbtape's?" -------------------------------------------------
def test_package_dir_is_the_folder_of_nbtape_init_with_a_trailing_separator():
    assert PACKAGE_DIR == os.path.dirname(os.path.abspath(nt.__file__)) + os.sep
    assert PACKAGE_DIR.endswith(os.sep) and not PACKAGE_DIR.endswith(os.sep * 2)
    assert os.path.isfile(os.path.join(PACKAGE_DIR, "__init__.py"))
    assert Path(PACKAGE_DIR).resolve() == PACKAGE
    assert PACKAGE_DIR in user_line.SKIP_PREFIXES
    # the trailing separator keeps a sibling folder such as nbtape_extras/ outside
    assert not (PACKAGE_DIR[:-1] + "_extras" + os.sep + "x.py").startswith(PACKAGE_DIR)


def _modules():
    return sorted(p for p in PACKAGE.rglob("*.py") if "__pycache__" not in p.parts)


def _uses_dunder_file(tree):
    return [node.lineno for node in ast.walk(tree)
            if (isinstance(node, ast.Name) and node.id == "__file__")
            or (isinstance(node, ast.Attribute) and node.attr == "__file__")]


def test_only_user_line_finds_the_package_by_its_own_file():
    users = {str(p.relative_to(PACKAGE.parent)): _uses_dunder_file(ast.parse(p.read_text()))
             for p in _modules()}
    users = {k: v for k, v in users.items() if v}
    assert set(users) == {os.path.join("nbtape", "diagnostics", "user_line.py")}, users


def _frame_prefix_checks(tree):
    """The names given to ``<...>.co_filename.startswith(NAME)`` in a module."""
    names = []
    for node in ast.walk(tree):
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                and node.func.attr == "startswith"
                and isinstance(node.func.value, ast.Attribute)
                and node.func.value.attr == "co_filename"):
            names += [a.id if isinstance(a, ast.Name) else ast.dump(a) for a in node.args]
    return names


def _imported_from_user_line(tree):
    return {a.asname or a.name for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)
            and (node.module or "").split(".")[-1] == "user_line" for a in node.names}


def test_every_module_that_judges_frames_by_file_takes_the_prefix_from_user_line():
    checked = 0
    for path in _modules():
        if path.name == "user_line.py":
            continue
        tree = ast.parse(path.read_text())
        names = _frame_prefix_checks(tree)
        if not names:
            continue
        checked += 1
        imported = _imported_from_user_line(tree)
        for name in names:
            assert name in imported and name in ("PACKAGE_DIR", "NUMPY_DIR", "SKIP_PREFIXES"), \
                f"{path.relative_to(PACKAGE.parent)} compares frames with {name}"
    assert checked >= 4          # errors, explain, extend, the tape: the scan sees them


# --- (b) every kind of op still names the user's line -------------------------------------------
@nt.custom_gradient
def _cube(x):
    return x ** 3, lambda g: 3.0 * g * x ** 2


@nt.custom_gradient
def _wrong_shape(x):
    return np.sum(x), lambda g: np.ones(7) * g


_recomputed_tanh = nt.recompute_grad(np.tanh)


def test_an_operator_names_the_users_line():
    x, y = nt.constant(2.0), nt.constant(3.0)
    with nt.GradientTape() as tape:
        tape.watch([x, y])
        z = x * y  # @operator
    assert op_named(tape, "np.multiply").where == at(
        "operator", "test_an_operator_names_the_users_line")
    assert [float(g) for g in tape.gradient(z, [x, y])] == [3.0, 2.0]


def test_a_numpy_function_a_ufunc_and_a_ufunc_method_name_the_users_line():
    fn = "test_a_numpy_function_a_ufunc_and_a_ufunc_method_name_the_users_line"
    x = nt.constant([0.5, 1.0, 1.5])
    with nt.GradientTape() as tape:
        tape.watch(x)
        a = np.sin(x)  # @ufunc
        b = np.add.reduce(a)  # @ufunc-method
        c = np.sum(a * b, axis=0)  # @function
    assert op_named(tape, "np.sin").where == at("ufunc", fn)
    assert op_named(tape, "np.add.reduce").where == at("ufunc-method", fn)
    assert op_named(tape, "np.sum").where == at("function", fn)
    x0 = x.numpy()
    s = np.sin(x0).sum()
    np.testing.assert_allclose(tape.gradient(c, x).numpy(), 2 * s * np.cos(x0))


def test_an_nn_function_custom_gradient_and_recompute_grad_name_the_users_line():
    fn = "test_an_nn_function_custom_gradient_and_recompute_grad_name_the_users_line"
    x = nt.constant([-1.0, 0.5, 2.0])
    with nt.GradientTape() as tape:
        tape.watch(x)
        r = nt.nn.relu(x)  # @nn
        c = _cube(r)  # @custom
        t = _recomputed_tanh(c)  # @recompute
        y = np.sum(t)
    assert op_named(tape, "nn.relu").where == at("nn", fn)
    assert op_named(tape, "custom_gradient(_cube)").where == at("custom", fn)
    assert op_named(tape, "recompute_grad(tanh)").where == at("recompute", fn)
    x0 = x.numpy()
    r0 = np.maximum(x0, 0.0)
    want = (1 - np.tanh(r0 ** 3) ** 2) * 3 * r0 ** 2 * (x0 > 0)
    np.testing.assert_allclose(tape.gradient(y, x).numpy(), want)


def test_a_custom_gradients_error_names_the_call():
    x = nt.constant([1.0, 2.0])
    with nt.GradientTape() as tape:
        tape.watch(x)
        y = _wrong_shape(x)  # @custom-call
    with pytest.raises(NbtapeError, match=named("custom-call")) as info:
        tape.gradient(y, x)  # @custom-gradient
    assert_raised_from(info.value, "custom-gradient")


def test_an_auto_watched_variable_and_a_watched_tensor_name_the_users_line():
    fn = "test_an_auto_watched_variable_and_a_watched_tensor_name_the_users_line"
    v = nt.Variable([1.0, 2.0])
    c = nt.constant(3.0)
    with nt.GradientTape() as tape:
        tape.watch(c)  # @watch
        y = np.sum(v * c)  # @first-read
        z = y * np.sum(v)
    watched = tape.watched
    assert watched[v._id].kind == "variable" and watched[v._id].where == at("first-read", fn)
    assert watched[c._id].kind == "tensor" and watched[c._id].where == at("watch", fn)
    gv, gc = tape.gradient(z, [v, c])      # z = c * sum(v) ** 2
    np.testing.assert_allclose(gv.numpy(), [2 * 3.0 * 3.0, 2 * 3.0 * 3.0])
    np.testing.assert_allclose(float(gc), 3.0 ** 2)


def test_an_escape_note_names_the_users_line():
    x = nt.Variable(2.0)
    with nt.GradientTape() as tape:
        y = x * x
        f = float(y)  # @escape
        z = nt.constant(f) * 2.0
    note, = tape.notes
    assert note.kind == "escape" and "float()" in note.detail
    assert note.where == at("escape", "test_an_escape_note_names_the_users_line")
    with pytest.warns(UserWarning, match=named("escape")) as caught:
        assert tape.gradient(z, x) is None  # @escape-gradient
    # the warning itself is attributed to the gradient call (errors.warn_user)
    assert (caught[0].filename, caught[0].lineno) == (__file__, line_of("escape-gradient"))


def test_an_out_buffer_escape_names_the_users_line():
    x = nt.constant([1.0, 2.0])
    buf = np.zeros(2)
    with nt.GradientTape() as tape:
        tape.watch(x)
        np.multiply(x, 2.0, out=buf)  # @out-escape
    note, = tape.notes
    assert note.kind == "escape" and "out=" in note.detail
    assert note.where == at("out-escape", "test_an_out_buffer_escape_names_the_users_line")


def test_an_assign_note_names_the_users_line():
    v = nt.Variable(1.0)
    with nt.GradientTape() as tape:
        y = v * 2.0
        v.assign(5.0)  # @assign
    note, = [n for n in tape.notes if n.kind == "assign"]
    assert note.where == at("assign", "test_an_assign_note_names_the_users_line")
    assert float(tape.gradient(y, v)) == 2.0


def test_a_cast_to_integers_is_noted_at_the_users_line():
    x = nt.Variable([0.5, 1.5])
    with nt.GradientTape() as tape:
        i = x.astype(np.int64)  # @cast
        y = np.sum(i * 2.0)
    notes = [n for n in tape.notes if n.kind == "dtype"]
    assert notes and notes[0].where == at("cast", "test_a_cast_to_integers_is_noted_at_the_users_line")
    assert named("cast") in str(tape.explain(y, x))


def test_forward_mode_errors_name_the_users_line():
    def no_rule_raw(v):
        return v * 2.0
    no_rule = primitive(no_rule_raw)
    try:
        x = nt.constant([1.0, 2.0])
        with nt.ForwardAccumulator(x, np.ones(2)) as acc:
            y = no_rule(x)  # @no-forward-rule
            z = np.sum(y)
        with pytest.raises(nt.NoGradientRuleError, match=named("no-forward-rule")) as info:
            acc.jvp(z)  # @jvp
        assert_raised_from(info.value, "jvp")
    finally:
        unregister(no_rule_raw)


def test_a_refused_keyword_operand_names_the_users_line_in_both_modes():
    x = nt.constant([1.0, 2.0, 4.0])
    d = nt.constant(1.0)
    with nt.ForwardAccumulator(d, 1.0) as acc:
        y = np.var(x, ddof=d)  # @ddof-forward
    with pytest.raises(nt.NoGradientRuleError, match=named("ddof-forward")):
        acc.jvp(y)
    with nt.GradientTape() as tape:
        tape.watch(d)
        y = np.var(x, ddof=d)  # @ddof-reverse
    with pytest.raises(nt.NoGradientRuleError, match="ddof=.*" + named("ddof-reverse")):
        tape.gradient(y, d)


def test_a_function_without_a_rule_names_the_users_line():
    x = nt.constant([3.0, 1.0, 3.0])
    with nt.GradientTape() as tape:
        tape.watch(x)
        u = np.unique(x)  # @no-rule
        y = np.sum(u)
    with pytest.raises(nt.NoGradientRuleError,
                       match=rf"np.unique.*{named('no-rule')} \(in test_a_function_without") as info:
        tape.gradient(y, x)  # @no-rule-gradient
    assert_raised_from(info.value, "no-rule-gradient")


def test_an_nbtape_error_from_a_users_mistake_ends_at_the_users_line():
    x = nt.constant(1.0)
    with nt.GradientTape() as tape:
        tape.watch(x)
        y = x * x
    tape.gradient(y, x)
    with pytest.raises(nt.NbtapeError, match="persistent") as info:
        tape.gradient(y, x)  # @consumed
    assert_raised_from(info.value, "consumed")
    v = nt.Variable(np.ones(2))
    with pytest.raises(InvalidArgumentError) as info:
        v.assign(np.ones(3))  # @assign-shape
    assert_raised_from(info.value, "assign-shape")
    with pytest.raises(ValueError, match="output_gradients") as info:
        with nt.GradientTape() as t2:
            t2.watch(x)
            z = x * 2.0
        t2.gradient(z, x, output_gradients=np.ones(4))  # @output-gradients
    assert_raised_from(info.value, "output-gradients")


def test_a_user_rule_of_nbtape_extend_is_checked_and_its_error_names_the_users_line():
    def stretch_raw(v):
        return v * 2.0
    stretch = primitive(stretch_raw)
    try:
        # a rule from outside nbtape is checked (extend judges the caller by PACKAGE_DIR)
        with pytest.raises(InvalidArgumentError, match="cannot be called as") as info:
            defvjp(stretch, lambda g: g)  # @arity
        assert_raised_from(info.value, "arity")
        defvjp(stretch, lambda g, ans, v: np.ones(5))     # the wrong shape: found when run
        x = nt.constant([1.0, 2.0])
        with nt.GradientTape() as tape:
            tape.watch(x)
            y = np.sum(stretch(x))
        with pytest.raises(InvalidArgumentError, match=r"VJP given for stretch_raw's") as info:
            tape.gradient(y, x)  # @user-rule
        assert_raised_from(info.value, "user-rule")
    finally:
        unregister(stretch_raw)


def test_explain_mentions_the_users_line_and_its_text():
    x = nt.Variable(2.0, name="x")
    with nt.GradientTape() as tape:
        y = x * x  # @explain-op
        z = np.sin(y)  # @explain-sin
    text = str(tape.explain(z, x))
    assert f"({named('explain-op')} (in test_explain_mentions_the_users_line_and_its_text)" \
        f": y = x * x  # @explain-op)" in text
    assert named("explain-sin") in text and "z = np.sin(y)" in text


def test_explain_of_a_broken_path_names_where_it_broke():
    x = nt.Variable(2.0, name="x")
    with nt.GradientTape() as tape:
        y = np.asarray(x * x)  # @explain-escape
        z = nt.constant(y) * 2.0
    text = str(tape.explain(z, x))
    assert named("explain-escape") in text and "np.asarray" in text


def test_a_notebook_cell_is_named_as_a_cell():
    # code compiled under IPython's cell file name, as a notebook runs it
    source = "import numpy as np\nwith nt.GradientTape() as tape:\n    y = np.cos(x)\n"
    ns = {"nt": nt, "x": nt.Variable(1.0, name="x")}
    exec(compile(source, "<ipython-input-7-0123abcd>", "exec"), ns)
    op, = ns["tape"].ops
    assert op.where == ("<ipython-input-7-0123abcd>", 3, "<module>")
    assert describe(op.where) == "line 3 of a notebook cell"
    assert "line 3 of a notebook cell" in str(ns["tape"].explain(ns["y"], ns["x"]))


# --- (c) the functions themselves ---------------------------------------------------------------
def _through_numpy(find):
    """``find(2)`` called by a numpy function: the frame two up from ``find`` is numpy's."""
    out = []
    np.apply_along_axis(lambda row: out.append(find(2)) or row, 0, np.zeros(1))  # @numpy-call
    return out[0]


def test_caller_skips_numpy_and_nbtape_frames():
    assert _through_numpy(caller) == at("numpy-call", "_through_numpy")
    got = []

    def f(a):
        got.append(caller(2))      # the frame above f is nbtape's grad: skipped
        return a * 2.0
    nt.grad(f)(1.0)  # @through-nbtape
    assert got == [at("through-nbtape", "test_caller_skips_numpy_and_nbtape_frames")]


def test_caller_starts_depth_frames_up_and_copes_with_a_shallow_stack():
    here = caller(1)  # @depth-one
    assert here == at("depth-one", "test_caller_starts_depth_frames_up_and_copes_with_a_shallow_stack")
    deep = caller(10 ** 6)  # @shallow
    assert deep == at("shallow", "test_caller_starts_depth_frames_up_and_copes_with_a_shallow_stack")

    def helper():
        return caller(2)
    from_helper = helper()  # @helper
    assert from_helper == at("helper",
                             "test_caller_starts_depth_frames_up_and_copes_with_a_shallow_stack")


def test_caller_raw_decodes_to_what_caller_says():
    def both():
        return caller(2), caller_raw(2)
    plain, raw = both()
    code, lasti = raw
    assert code is sys._getframe().f_code and isinstance(lasti, int)
    assert decode(raw) == plain
    assert decode(_through_numpy(caller_raw)) == _through_numpy(caller)


def test_decode_finds_each_line_of_a_multi_line_function():
    def several():
        first = caller_raw(1)
        x = 1
        second = caller_raw(1)
        return first, x, second
    first, _, second = several()
    start = several.__code__.co_firstlineno
    assert decode(first)[1:] == (start + 1, "several")
    assert decode(second)[1:] == (start + 3, "several")


def test_decode_passes_decoded_and_missing_places_through():
    triple = ("/somewhere/file.py", 4, "f")
    assert decode(triple) is triple
    assert decode(None) is None


@pytest.mark.parametrize("where, text", [
    (("/a/b/model.py", 3, "<module>"), "line 3 of model.py"),
    (("/a/b/model.py", 3, "train"), "line 3 of model.py (in train)"),
    (("<ipython-input-4-5d1e>", 2, "<module>"), "line 2 of a notebook cell"),
    (("<ipython-input-4-5d1e>", 2, "step"), "line 2 of a notebook cell (in step)"),
    ((os.path.join(os.sep, "tmp", "ipykernel_4242", "3141592.py"), 7, "<module>"),
     "line 7 of a notebook cell"),
    ((os.path.join(os.sep, "tmp", "ipykernel_4242", "3141592.py"), 7, "loss"),
     "line 7 of a notebook cell (in loss)"),
    ((os.path.join(os.sep, "tmp", "ipykernel_4242", "helpers.py"), 7, "<module>"),
     "line 7 of helpers.py"),
    ((os.path.join(os.sep, "tmp", "kernel_4242", "3141592.py"), 7, "<module>"),
     "line 7 of 3141592.py"),
    (("<string>", 1, "<module>"), "line 1 of <string>"),
    (None, "an unknown line"),
])
def test_describe(where, text):
    assert describe(where) == text


def test_describe_and_source_line_decode_a_raw_place():
    raw = caller_raw(1)  # @raw-place
    assert describe(raw) == f"{named('raw-place')} (in test_describe_and_source_line_decode_a_raw_place)"
    assert source_line(raw) == "raw = caller_raw(1)  # @raw-place"


def test_source_line():
    where = caller(1)  # @source
    assert source_line(where) == "where = caller(1)  # @source"      # stripped
    assert source_line(None) == ""
    assert source_line(("/no/such/file.py", 3, "f")) == ""
    assert source_line(("<ipython-input-1-ab>", 1, "<module>")) == ""


def test_source_line_reads_a_cell_that_linecache_knows(tmp_path):
    name = "<ipython-input-9-feed>"
    text = "a = 1\n    b = np.sin(a)   \n"
    linecache.cache[name] = (len(text), None, text.splitlines(True), name)
    try:
        assert source_line((name, 2, "<module>")) == "b = np.sin(a)"
    finally:
        linecache.cache.pop(name, None)


class _Where(LazyWhere):
    __slots__ = ("_where",)

    def __init__(self, where):
        self._where = where


def test_lazy_where_decodes_once_and_keeps_the_decoded_place():
    raw = caller_raw(1)  # @lazy
    w = _Where(raw)
    assert w._where is raw
    first = w.where
    assert first == at("lazy", "test_lazy_where_decodes_once_and_keeps_the_decoded_place")
    assert w._where == first and type(w._where[0]) is str       # kept decoded
    assert w.where is w._where


def test_lazy_where_leaves_decoded_and_missing_places_alone():
    triple = ("f.py", 1, "g")
    assert _Where(triple).where is triple
    assert _Where(None).where is None


def test_recorded_ops_decode_their_place_lazily():
    x = nt.constant(1.0)
    with nt.GradientTape() as tape:
        tape.watch(x)
        y = np.exp(x)  # @lazy-op
    op = tape.ops[-1]
    assert op.where == at("lazy-op", "test_recorded_ops_decode_their_place_lazily")
    assert op.where == op.where                    # asked twice: the same place
    assert float(y) == np.exp(1.0)


def test_warnings_are_attributed_to_the_users_line():
    x = nt.Variable(3, name="count")
    with nt.GradientTape() as tape:
        y = x * 2
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert tape.gradient(y, x) is None  # @int-warning
    assert [(w.filename, w.lineno) for w in caught] == [(__file__, line_of("int-warning"))]
