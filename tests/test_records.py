"""The op record (nbtape/tape/records.py): one exact tuple per op, read by name.

- every field of a recorded op, read through its ``Op`` view, is what the op was;
- nothing in nbtape reads a record by a bare position, and every unpacking of a
  record names its fields in ``FIELDS`` order (checked from the source);
- ``Records`` (the rule table, views), ``free_records``, ``OpsView`` and ``small_tape``.
"""
import ast
import gc
import pathlib
import weakref

import numpy as np
import pytest

import nbtape as nt
from nbtape.tape import records as R

PACKAGE = pathlib.Path(nt.__file__).resolve().parent


def test_the_fields_and_their_positions_agree():
    assert len(R.FIELDS) == 11
    for k, name in enumerate(R.FIELDS):
        assert getattr(R, name.upper()) == k


def test_each_field_of_a_recorded_op_is_what_the_op_was():
    x = nt.Variable([1.0, 2.0], name="x")
    c = nt.constant([3.0, 4.0])              # a tensor the tape does not follow
    with nt.GradientTape(persistent=True) as tape:
        y = x * c                            # line of the op
        line = __import__("inspect").currentframe().f_lineno - 1
        z = np.sin(y)
    rec = tape.op_records[0]
    assert type(rec) is tuple and len(rec) == len(R.FIELDS)
    op = tape.ops[0]
    assert op.record is rec and op.name == "np.multiply"
    assert op.rule is tape.op_records.rules[rec[R.RULE]]
    np.testing.assert_array_equal(op.args[0], [1.0, 2.0])
    np.testing.assert_array_equal(op.args[1], [3.0, 4.0])
    assert op.kwargs is None or op.kwargs == {}
    assert op.in_ids == (x._id, None)                 # the constant is not followed
    assert op.all_ids == (x._id, c._id)               # ...but pictures still link it
    assert op.out_ids == (y._id,)
    assert op.metas == (((2,), np.dtype(float)), ((2,), np.dtype(float)))
    assert op.where[1] == line and op.where[0].endswith("test_records.py")
    assert op.out is y and op.kept_output
    assert op.raw_args is True and op.saved_id(0) == x._id and op.saved_id(1) == c._id
    sin = tape.ops[1]
    assert sin.name == "np.sin" and sin.in_ids == (y._id,) and sin.out_ids == (z._id,)


def _bare_reads(path):
    """``(line, source)`` of each ``name[<int>]`` on a record-like name, and each
    unpacking of 11 names that does not follow FIELDS."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant) \
                and isinstance(node.slice.value, int):
            base = node.value
            if isinstance(base, ast.Name) and base.id in ("rec", "record") or \
                    isinstance(base, ast.Subscript) and isinstance(base.value, ast.Name) \
                    and base.value.id in ("records", "ops"):
                out.append((node.lineno, ast.unparse(node)))
        targets = []
        if isinstance(node, ast.Assign):
            targets = node.targets
        elif isinstance(node, (ast.For, ast.comprehension)):
            targets = [node.target]
        for t in targets:
            for tup in ast.walk(t):
                if isinstance(tup, ast.Tuple) and len(tup.elts) == len(R.FIELDS):
                    names = [e.id if isinstance(e, ast.Name) else "?" for e in tup.elts]
                    if any(n not in ("_", f) and not (f == "rule" and n == "key")
                           for n, f in zip(names, R.FIELDS)):
                        out.append((tup.lineno, ast.unparse(tup)))
    return out


def test_nothing_reads_a_record_by_a_bare_position():
    found = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        if path.name == "records.py":
            continue
        reads = _bare_reads(path)
        if reads:
            found[str(path.relative_to(PACKAGE))] = reads
    assert found == {}


def test_the_source_check_catches_a_bare_read_and_a_misordered_unpacking(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text("def f(rec, records, k):\n"
                   "    a = rec[6][0]\n"
                   "    b = records[k][5]\n"
                   "    key, args, kwargs, ans, out_ids, metas, in_ids, w, o, a, r = rec\n"
                   "    rule, _, _, _, in_ids, _, out_ids, _, _, _, _ = rec\n")
    assert sorted(line for line, _ in _bare_reads(bad)) == [2, 3, 4]


def test_the_tape_builds_its_records_in_fields_order():
    # the one place a record is built: its names, read from the source, in FIELDS order
    src = (PACKAGE / "tape" / "gradient_tape.py").read_text(encoding="utf-8")
    built = [n for n in ast.walk(ast.parse(src)) if isinstance(n, ast.Call)
             and ast.unparse(n.func) == "ops.append"]
    assert len(built) == 1
    names = [ast.unparse(e) for e in built[0].args[0].elts]
    assert names == ["key", "saved", "kwargs", "ans", "ids", "metas", "out_ids", "where",
                     "out", "ids if all_ids is None else all_ids", "raw"]


def test_records_keep_one_rule_table_and_one_view_per_position():
    x = nt.Variable(2.0)
    with nt.GradientTape() as tape:
        y = x * x
        z = y * 3.0
        w = np.sin(z)
    records = tape.op_records
    assert [r.name for r in records.rules] == ["np.multiply", "np.sin"]
    assert records[0][R.RULE] == records[1][R.RULE] == 0
    assert records.stops == [False, False]
    assert records.view(-1) is records.view(2) and records.view(0) is not records.view(1)
    with pytest.raises(IndexError):
        records.view(3)
    one = records.only(1)
    assert len(one) == 1 and one[0] is records[1] and one.rules is records.rules
    assert tape.gradient(w, x) is not None


def test_free_records_drops_what_the_rules_kept_and_keeps_the_structure():
    x = nt.Variable(np.ones(3))
    with nt.GradientTape(persistent=True) as tape:
        y = np.sin(x)
    records = tape.op_records
    before = records[0]
    R.free_records(records)
    after = records[0]
    assert after[R.ARGS] is None and after[R.KWARGS] is None and after[R.ANS] is None
    for field in ("in_ids", "metas", "out_ids", "where", "all_ids", "raw_args"):
        k = getattr(R, field.upper())
        assert after[k] == before[k]
    out = after[R.OUT]
    assert type(out) is weakref.ref and out() is y       # kept only while the user keeps it
    del y, before
    gc.collect()
    assert tape.ops[0].out is None
    R.free_records(records, keep_output=True)
    assert tape.ops[0].kept_output


def test_free_records_keeps_small_constants_and_only_those():
    x = nt.Variable(np.ones(3))
    c = nt.constant([2.0, 3.0, 4.0])
    three = np.arange(7.0)[:3]
    with nt.GradientTape(persistent=True) as tape:
        y = 0.75 - x                                  # a float constant
        z = y * three                                 # an array of 3 numbers
        v = z * c                                     # a constant tensor's array
        w = v[:, None] * np.zeros((3, 7))             # 21 numbers: too many to keep
        s = np.stack([v, np.ones(3)])                 # a sequence of operands
    records = tape.op_records
    kept = R.Records()
    kept.extend(records)
    kept.rules, kept.keys, kept.stops = records.rules, records.keys, records.stops
    R.free_records(kept)            # a long tape's (no outputs kept): no constants either
    assert kept.small == {}
    R.free_records(records, keep_output=True)         # a classroom-sized tape's
    ops = tape.ops
    assert [op.name for op in ops] == ["np.subtract", "np.multiply", "np.multiply",
                                       "getitem", "np.multiply", "np.stack"]
    assert ops[0].args is None and ops[0].small_constant(0) == 0.75
    assert np.array_equal(ops[1].small_constant(1), [0.0, 1.0, 2.0])
    assert np.array_equal(ops[2].small_constant(1), [2.0, 3.0, 4.0])
    assert ops[4].small_constant(1) is None
    assert np.array_equal(ops[5].small_constant(1), np.ones(3))
    # a copy: changing the user's array afterwards changes nothing a picture shows
    three[0] = 99.0
    assert ops[1].small_constant(1)[0] == 0.0
    # operands the tape follows are never kept (nor are those of an op that saved none)
    assert [op.small_constant(0) for op in ops[1:]] == [None] * 5
    del y, w, s


def test_ops_view_is_a_read_only_sequence_of_views():
    x = nt.Variable(2.0)
    with nt.GradientTape() as tape:
        y = np.exp(x) + x
    view = R.OpsView(tape.op_records)
    assert len(view) == 2 and [op.name for op in view] == ["np.exp", "np.add"]
    assert view[0] is view[0] and view[-1].name == "np.add"
    assert [op.name for op in view[::-1]] == ["np.add", "np.exp"]
    assert repr(view) == "<2 recorded ops>"
    with pytest.raises(TypeError):
        view[0] = None


def test_small_tape_counts_kept_outputs_and_refuses_one_not_kept():
    x = nt.constant(np.ones(100))
    with nt.GradientTape() as tape:
        tape.watch(x)
        y = np.sin(x)
        z = np.cos(y)
    records = tape.op_records
    assert R.small_tape(records, 10, 1600)          # 2 outputs of 800 bytes
    assert not R.small_tape(records, 10, 1599)
    assert not R.small_tape(records, 1, 1 << 20)    # too many ops
    big = nt.constant(np.ones(1 << 17))             # over the size an op keeps its output
    with nt.GradientTape() as tape2:
        tape2.watch(big)
        np.sin(big)
    assert not tape2.ops[0].kept_output
    assert not R.small_tape(tape2.op_records, 10, 1 << 30)
