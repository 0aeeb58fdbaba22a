"""The architecture, checked from the source: nbtape's packages stand in an order and
imports run down it (PACKAGE_ORDER), the engine never imports the notebook layer, and
no module reads another's private names.

The import graph is built from the AST of every module in nbtape/, with every import
statement wherever it stands (inside functions too: a lazy import is still a knot).
"""
import ast
import pathlib

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent / "nbtape"
FACADE = "nbtape"

# Private names of numpy and of Python that nbtape must use: numpy's "no value given"
# default (to mirror numpy's own signatures) and the frame access the user's-line
# lookup is built on.
FOREIGN_PRIVATE = {"_NoValue", "_getframe"}
# Modules private to the package (a module named ``_x.py``; there are none today):
# every module of nbtape may import them; no one outside should.
PACKAGE_PRIVATE = {p.stem for p in ROOT.rglob("_*.py") if not p.stem.startswith("__")}
# The engine's value cell, read by every module that computes on values: a tensor's
# array and id, and a variable's current tensor (``_tensor``; ``_read`` records the
# read, ``_leaf`` is the tensor a value stands for). They stay private because they
# are not for users (``numpy()`` copies, an id is an implementation detail); the
# engine reads them on purpose, on the hot path, so they are listed here.
VALUE_CELL = {"_value", "_id", "_tensor", "_read", "_leaf"}
# Reads that other lanes of this wave remove (the rule modules get rules/util.py, the
# training pieces move to nbtape/training/): delete each entry when its module changes.
OWED = {
}


def _module_name(path):
    rel = path.relative_to(ROOT.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _modules():
    return {_module_name(p): p for p in sorted(ROOT.rglob("*.py"))}


def _resolve(module, is_package, node, modules):
    """The absolute module names an import statement depends on: for ``from p import x``
    the module ``p.x`` when there is one (``p`` is its package, run anyway), else ``p``."""
    if isinstance(node, ast.Import):
        return [a.name for a in node.names]
    if node.level:
        base = module.split(".")
        if not is_package:
            base = base[:-1]
        base = base[:len(base) - (node.level - 1)]
        prefix = ".".join(base + ([node.module] if node.module else []))
    else:
        prefix = node.module
    return [f"{prefix}.{a.name}" if f"{prefix}.{a.name}" in modules else prefix
            for a in node.names]


def import_graph():
    """``{module: {nbtape modules it imports}}``, every import anywhere in the file."""
    modules = _modules()
    graph = {}
    for name, path in modules.items():
        is_package = path.name == "__init__.py"
        found = set()
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                for target in _resolve(name, is_package, node, modules):
                    if target in modules and target != name:
                        found.add(target)
            elif (isinstance(node, ast.Call) and getattr(node.func, "id", None) == "__import__"
                  and node.args and isinstance(node.args[0], ast.Constant)):
                if node.args[0].value in modules:
                    found.add(node.args[0].value)
        graph[name] = found
    return graph


# The packages of nbtape, from the ground up: each may import only the ones below it.
# ``diagnostics`` is the ground (the user's line, errors, float warnings); ``core`` the
# values, the dispatcher and the rule machinery; ``extend`` its public face; ``rules`` the
# rule families (and the tensors' operators); ``display`` how the engine shows things;
# ``tape`` recording, the passes and the reports that read a tape; then what builds on
# the tape, the notebook layer, and the facade (``import nbtape as nt``) on top.
PACKAGE_ORDER = ("diagnostics", "core", "extend", "rules", "display", "tape", "transforms",
                 "training", "notebook", FACADE)
# Imports that run back up the order, each with its reason (the target is at most four
# package arrows back up, and none new: the test below lists exactly these).
UPWARD = {
    # exercise checkers call the public API as a student writes it (``import nbtape as nt``)
    ("nbtape.notebook.exercises.early", "nbtape"): "the public API, as a student uses it",
    ("nbtape.notebook.exercises.feedback", "nbtape"): "the public API, as a student uses it",
    ("nbtape.notebook.exercises.later", "nbtape"): "the public API, as a student uses it",
    ("nbtape.notebook.exercises.further", "nbtape"): "the public API, as a student uses it",
    ("nbtape.notebook.exercises.grader", "nbtape"): "the public API, as a student uses it",
    ("nbtape.notebook.exercises.handin", "nbtape"): "the public API, as a student uses it",
    # a rule with extra keyword operands calls its base rule's VJP and JVP the way the
    # passes do (a JVP from a VJP takes a small tape), inside the call
    ("nbtape.core.operands", "nbtape.tape.backward"): "how the passes call a rule",
    ("nbtape.core.operands", "nbtape.tape.forward"): "how the passes call a rule",
}


def package_of(module):
    """The package of ``PACKAGE_ORDER`` a module belongs to."""
    parts = module.split(".")
    return FACADE if len(parts) == 1 else parts[1]


def upward_imports(graph, order=PACKAGE_ORDER):
    """``{(module, target)}`` for each import from a package to one above it."""
    rank = {p: i for i, p in enumerate(order)}
    return {(m, t) for m, ts in graph.items() for t in ts
            if rank[package_of(t)] > rank[package_of(m)]}


def test_every_package_has_its_place_in_the_order():
    assert {package_of(m) for m in _modules()} == set(PACKAGE_ORDER)


def test_imports_run_down_the_package_order():
    # at module level or inside a function alike (the graph sees both)
    assert upward_imports(import_graph()) == set(UPWARD)


def test_at_most_four_package_arrows_run_back_up():
    arrows = {(package_of(m), package_of(t)) for m, t in UPWARD}
    assert len(arrows) <= 4, sorted(arrows)


def test_the_order_check_works():
    graph = {"nbtape.core.a": {"nbtape.tape.b", "nbtape.diagnostics.c"},
             "nbtape.tape.b": {"nbtape.core.a"}, "nbtape.diagnostics.c": set(),
             "nbtape": {"nbtape.core.a"}, "nbtape.notebook.d": {"nbtape"}}
    assert upward_imports(graph) == {("nbtape.core.a", "nbtape.tape.b"),
                                     ("nbtape.notebook.d", "nbtape")}


def _cycles(graph):
    """Every strongly connected group of more than one module (Tarjan's algorithm)."""
    index, low, stack, on, out = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                on.discard(w)
                group.append(w)
                if w == v:
                    break
            if len(group) > 1:
                out.append(sorted(group))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def _engine(name):
    return name != FACADE and not name.startswith("nbtape.notebook")


def test_the_graph_sees_lazy_imports():
    graph = import_graph()
    # the facade's own lazy import of the magic, inside load_ipython_extension
    assert "nbtape.notebook.magics" in graph[FACADE]
    assert "nbtape.core.dispatch" in graph["nbtape.rules.operators"]


def test_no_import_cycles():
    # the facade imports everything, and a package's __init__ is run by any import of
    # its modules, so imports *of* the facade are what must not exist
    graph = import_graph()
    assert _cycles(graph) == []
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == [["a", "b", "c"]]   # the check works


def test_the_engine_never_imports_the_notebook_layer():
    graph = import_graph()
    wrong = sorted((m, t) for m, ts in graph.items() if _engine(m)
                   for t in ts if t.startswith("nbtape.notebook"))
    assert wrong == []
    assert _engine("nbtape.tape.gradient_tape") and _engine("nbtape.rules.core_ops")
    assert not _engine(FACADE) and not _engine("nbtape.notebook.graph.model")
    # the facade's loader is seen, so a lazy engine import would be too
    assert "nbtape.notebook.graph" in graph[FACADE]


def _defined_private(tree):
    """Private names a module defines: its functions, classes and globals, the
    attributes its classes set on ``self``/``cls``, their ``__slots__``, and the names
    it imports (an import of a private name is a read of its own, checked below)."""
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
        elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store) \
                and isinstance(node.value, ast.Name) and node.value.id in ("self", "cls"):
            names.add(node.attr)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            names.add(node.value)       # __slots__ entries
        elif isinstance(node, ast.alias):
            names.add(node.asname or node.name.split(".")[-1])
    return names


def private_reads(path):
    """``(line, expression)`` for each ``x._name`` in ``path`` where ``x`` is not
    ``self``/``cls`` and ``_name`` is not the module's own, and each
    ``from m import _name`` of another module's private name."""
    tree = ast.parse(path.read_text(), str(path))
    own = _defined_private(tree) | FOREIGN_PRIVATE | VALUE_CELL
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            out += [(node.lineno, f"from {'.' * node.level}{node.module or ''} import {a.name}")
                    for a in node.names if a.name.startswith("_") and a.name not in PACKAGE_PRIVATE]
        if isinstance(node, ast.Attribute) and node.attr.startswith("_") \
                and not (node.attr.startswith("__") and node.attr.endswith("__")):
            if isinstance(node.value, ast.Name) and node.value.id in ("self", "cls"):
                continue
            if node.attr not in own:
                out.append((node.lineno, ast.unparse(node)))
    return out


def test_the_private_read_check_works(tmp_path):
    p = tmp_path / "m.py"
    p.write_text("from .x import _y\nclass A:\n    def f(self, t):\n        self._a = 1\n"
                 "        t._c = 2\n        return t._ops, self._b, t._a, t.__len__, t._value\n")
    assert sorted(private_reads(p)) == [(1, "from .x import _y"), (5, "t._c"), (6, "t._ops")]


@pytest.mark.parametrize("name", sorted(_modules()))
def test_no_module_reads_another_modules_private_names(name):
    reads = [r for r in private_reads(_modules()[name]) if r[1] not in OWED.get(name, ())]
    assert reads == []


def test_owed_reads_are_still_there():
    # an entry left here after its module changed would hide a new read of that name
    for name, owed in OWED.items():
        path = _modules().get(name)
        found = {r[1] for r in private_reads(path)} if path is not None else set()
        assert owed <= found, f"{name} no longer reads {sorted(owed - found)}: drop it from OWED"


def test_import_nbtape_alone_draws_pictures_through_the_notebook_layers_hook():
    # the engine asks nbtape.display.pictures; the facade loads the notebook graph on first need
    pytest.importorskip("graphviz")
    code = ("import sys, nbtape as nt\n"
            "assert not any(m.startswith('nbtape.notebook') for m in sys.modules), 'eager'\n"
            "x = nt.Variable(2.0)\n"
            "with nt.GradientTape() as t:\n"
            "    y = x * x\n"
            "import graphviz\n"
            "assert isinstance(t.graph(), graphviz.Digraph)\n"
            "assert 'nbtape.notebook.graph' in sys.modules\n")
    import subprocess
    import sys
    env = dict(__import__("os").environ, PYTHONPATH=str(ROOT.parent))
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    assert run.returncode == 0, run.stderr


# rules: fields set by the registry alone, derived fields never stale ------------------------
def _rule_field_writes(path, fields):
    """``(line, target)`` of each assignment to a Rule field on something that is a rule
    (a name with "rule" in it, an upper-case constant, ``rule_for(..)`` or ``RULES[..]``)."""
    out = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        targets = node.targets if isinstance(node, ast.Assign) else \
            [node.target] if isinstance(node, (ast.AugAssign, ast.AnnAssign)) else []
        for t in targets:
            for a in ast.walk(t):
                if not (isinstance(a, ast.Attribute) and a.attr in fields):
                    continue
                obj = ast.unparse(a.value)
                if obj in ("self", "cls"):
                    continue
                if "rule" in obj.lower() or obj.lstrip("_").isupper() or \
                        obj.startswith(("rule_for(", "RULES[")):
                    out.append((a.lineno, ast.unparse(a)))
    return out


def test_only_the_registry_sets_a_rules_fields():
    from nbtape.core.rule import Rule
    fields = set(Rule.__slots__)
    allowed = {"nbtape.core.registry", "nbtape.core.rule"}
    found = {name: w for name, path in _modules().items() if name not in allowed
             for w in [_rule_field_writes(path, fields)] if w}
    assert found == {}


def test_the_rule_field_check_works(tmp_path):
    p = tmp_path / "m.py"
    p.write_text("_STOP.stop = True\nrule.save, rule.save_all = (), False\n"
                 "rule_for(f).zero = True\nlayer.name = 'x'\nself.vjps = ()\n")
    assert _rule_field_writes(p, {"stop", "save", "save_all", "zero", "name", "vjps"}) == [
        (1, "_STOP.stop"), (2, "rule.save"), (2, "rule.save_all"), (3, "rule_for(f).zero")]


def test_a_rules_derived_fields_follow_the_fields_they_come_from():
    import numpy as np
    from nbtape.core.registry import operand_names
    from nbtape.core.rule import Rule, VARARGS
    r = Rule(np.add)
    assert r.save_all and r.fast == 0 and r.operand_names is None
    r.nargs = 2
    assert r.fast == 2
    assert operand_names(r) == r.operand_names == frozenset({"x1", "x2"})
    r.save = (True, False)
    assert not r.save_all and r.operand_names is None      # the cache was dropped
    r.save = ()
    assert not r.save_all
    r.save = None
    assert r.save_all                                         # None: keep everything
    r.refused = frozenset({1})
    assert r.fast == 1
    r.zero = True
    assert r.fast == -1
    r.zero, r.kind = False, VARARGS
    assert r.fast == -1
    sig = r.signature
    r.vjps = (lambda g, ans, x, y: g,)
    assert r._sig is None or r._sig is r._given_sig          # read again on next ask
    assert r.signature is not None and sig is not None


# the recording stack has one owner ------------------------------------------------------------
STACK_OWNER = "nbtape.core.state"
_MUTATORS = {"append", "remove", "pop", "insert", "clear", "extend"}


def stack_changes(path):
    """``(line, text)`` of each change to the recording stack in ``path``: an assignment
    to ``tls.stack``, a call of a mutating list method on it or on a name bound to it
    (``stack = tls.stack``), or a store or ``del`` of one of its items."""
    tree = ast.parse(path.read_text(), str(path))

    def is_stack(node, aliases):
        return (isinstance(node, ast.Attribute) and node.attr == "stack"
                and isinstance(node.value, ast.Name) and node.value.id == "tls") or \
            (isinstance(node, ast.Name) and node.id in aliases)

    aliases = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and is_stack(node.value, set()):
            aliases.update(t.id for t in node.targets if isinstance(t, ast.Name))
    out = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.Assign, ast.AugAssign, ast.Delete)):
            targets = node.targets if isinstance(node, (ast.Assign, ast.Delete)) \
                else [node.target]
            for t in targets:
                if is_stack(t, set()) or (isinstance(t, ast.Subscript)
                                          and is_stack(t.value, aliases)):
                    out.append((node.lineno, ast.unparse(node).splitlines()[0]))
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                and node.func.attr in _MUTATORS and is_stack(node.func.value, aliases):
            out.append((node.lineno, ast.unparse(node)))
    return out


def test_the_stack_change_check_works(tmp_path):
    p = tmp_path / "m.py"
    p.write_text("def f(r):\n    tls.stack.append(r)\n    stack = tls.stack\n    del stack[0]\n"
                 "    tls.stack = []\n    tls.stack[:] = [r]\n    x = [r]\n    x.append(r)\n"
                 "    n = len(tls.stack)\n")
    assert sorted(line for line, _ in stack_changes(p)) == [2, 4, 5, 6]


def test_only_core_state_changes_the_recording_stack():
    # everything else enters a block of core.state's (recording, not_recording, only,
    # standing_in, suspended, outer_only) and reads tls.stack
    found = {name: c for name, path in _modules().items() if name != STACK_OWNER
             for c in [stack_changes(path)] if c}
    assert found == {}
    assert stack_changes(_modules()[STACK_OWNER])      # the owner is seen


def test_the_notebook_layer_never_reads_the_recording_state():
    graph = import_graph()
    assert sorted(m for m, ts in graph.items() if m.startswith("nbtape.notebook")
                  and "nbtape.core.state" in ts) == []


def test_the_tape_and_its_paused_stand_in_declare_the_recorder_protocol():
    from nbtape.core.recorder import Listener, Recorder
    from nbtape.tape.gradient_tape import GradientTape, _Paused
    for cls in (GradientTape, _Paused, Listener):
        assert Recorder in cls.__mro__, cls


def test_the_notebook_layer_reads_a_tape_through_the_tape_and_its_view():
    # the passes, the NaN searches and the recording stack reach the pictures and players
    # through GradientTape's view (tape.reach, tape.adjoints, tape.step_back, ...)
    graph = import_graph()
    allowed = {"nbtape.tape.gradient_tape", "nbtape.tape.view"}
    wrong = sorted((m, t) for m, ts in graph.items() if m.startswith("nbtape.notebook")
                   for t in ts if t.startswith("nbtape.tape") and t not in allowed)
    assert wrong == []
