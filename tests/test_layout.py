"""The package's layout shows its architecture: read from the source files, not imported.

- every module has a file name of its own (``__init__.py`` aside), so a name in a
  traceback or a review says which module it is;
- the engine's modules live in subpackages that follow the reading order
  (``diagnostics``, ``core``, ``rules``, ``display``, ``tape``, ``transforms``: the
  package order of tests/test_architecture.py), each listed in its subpackage's
  docstring, and a module's name does not repeat its folder's
  (``tape/tape_view.py``): a subpackage, not a name prefix;
- every engine module has a test module found by its name (``tests/test_X.py`` or
  ``tests/test_<subpackage>_X.py`` for ``nbtape/<subpackage>/X.py``);
- no module is longer than MAX_LINES (one concept per module), and no engine function
  longer than MAX_FUNCTION_LINES (the hot path reads as named steps);
- no public top-level name (function, class or constant) is defined in two modules,
  so a name means one thing wherever it is read;
- the engine never imports ``nbtape.training`` (the Keras-style pieces build on the
  engine, not the other way round).

Each check is also run on a small made-up package with the fault it looks for.
"""
import ast
import collections
import pathlib

ROOT = pathlib.Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "nbtape"
MAX_LINES = 520
MAX_FUNCTION_LINES = 80
# Layers built on the engine; every other module of the package is the engine.
LAYERS = ("training", "notebook")
# The engine's subpackages, in reading order; beside them only the facade and the public
# ``nbtape.extend`` stand at the top.
SUBPACKAGES = ("diagnostics", "core", "rules", "display", "tape", "transforms")
TOP_LEVEL = {"__init__.py", "extend.py"}
TESTS = ROOT / "tests"
# Names deliberately defined in more than one module, with the reason.
SHARED_NAMES = {
    # IPython looks these hook names up in whatever module %load_ext names: the package's
    # pair hands over to the magic's own
    "load_ipython_extension": "IPython's extension hook",
    "unload_ipython_extension": "IPython's extension hook",
    # nbtape.extend is the public, checked face of the registry's def* functions: the
    # checks run only for rules given from outside nbtape, so built-in rules pay nothing
    **{name: "nbtape.extend wraps the registry's function of that name"
       for name in ("defvjp", "defjvp", "defderiv", "deflinear", "defnondiff", "defzero",
                    "primitive")},
}


def modules(package):
    return sorted(p for p in package.rglob("*.py") if "__pycache__" not in p.parts)


def dotted(path, package):
    parts = path.relative_to(package.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def shared_file_names(package):
    """``{file name: [paths]}`` for module file names used more than once."""
    seen = collections.defaultdict(list)
    for path in modules(package):
        if path.name != "__init__.py":
            seen[path.name].append(str(path.relative_to(package.parent)))
    return {name: paths for name, paths in seen.items() if len(paths) > 1}


def long_functions(package, limit=MAX_FUNCTION_LINES):
    """``{"path:function": lines}`` for engine functions longer than ``limit`` lines
    (the notebook layer aside): the hot path reads as named steps (issue 35)."""
    out = {}
    for path in modules(package):
        rel = path.relative_to(package.parent)
        if "notebook" in rel.parts:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                n = node.end_lineno - node.lineno + 1
                if n > limit:
                    out[f"{rel}:{node.name}"] = n
    return out


def long_modules(package, limit=MAX_LINES):
    """``{path: line count}`` for modules longer than ``limit`` lines."""
    out = {}
    for path in modules(package):
        n = len(path.read_text(encoding="utf-8").splitlines())
        if n > limit:
            out[str(path.relative_to(package.parent))] = n
    return out


def _targets(target):
    if isinstance(target, ast.Name):
        yield target.id
    elif isinstance(target, (ast.Tuple, ast.List)):
        for element in target.elts:
            yield from _targets(element)
    elif isinstance(target, ast.Starred):
        yield from _targets(target.value)
    # an attribute or item (``rule_for(f).name = ...``) defines no name of the module


def _definitions(tree):
    """``(name, statement)`` for each name a module's top-level statements define."""
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            yield node.name, node
        elif isinstance(node, ast.Assign):
            for target in node.targets:
                yield from ((name, node) for name in _targets(target))
        elif isinstance(node, ast.AnnAssign):
            yield from ((name, node) for name in _targets(node.target))


def names_defined_twice(package, allowed=()):
    """``{name: [modules]}`` for public top-level names that modules define differently.

    Imports are not definitions, so a module may re-export another's name; the same
    statement in two modules (``LN2, LN10 = math.log(2.0), math.log(10.0)``) means
    the same thing in both; private (``_``) names belong to their module and may repeat.
    """
    where = collections.defaultdict(dict)
    for path in modules(package):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for name, node in _definitions(tree):
            if not name.startswith("_") and name not in allowed:
                where[name][dotted(path, package)] = ast.dump(node)
    return {name: sorted(defs) for name, defs in where.items()
            if len(defs) > 1 and len(set(defs.values())) > 1}


def _imported(path, package):
    """The absolute names of the modules ``path`` imports (function-level imports too)."""
    here = dotted(path, package).split(".")
    if path.name != "__init__.py":
        here = here[:-1]               # a relative import starts from the module's package
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = here[:len(here) - node.level + 1] if node.level else []
            module = ".".join(base + ([node.module] if node.module else []))
            yield module
            yield from (f"{module}.{alias.name}" for alias in node.names)


def misplaced_modules(package):
    """Engine modules outside the subpackages, and subpackages not in SUBPACKAGES."""
    out = sorted(p.name for p in package.glob("*.py") if p.name not in TOP_LEVEL)
    out += sorted(p.name + "/" for p in package.iterdir() if p.is_dir()
                  and (p / "__init__.py").exists() and p.name not in SUBPACKAGES + LAYERS)
    return out


def prefixed_names(package):
    """Modules whose name begins with their folder's name (``tape/tape_view.py``)."""
    return sorted(str(p.relative_to(package.parent)) for p in modules(package)
                  if p.stem.startswith(p.parent.name + "_"))


def unlisted_modules(package):
    """``{subpackage: [modules its docstring does not name]}``."""
    out = {}
    for sub in SUBPACKAGES:
        init = package / sub / "__init__.py"
        doc = ast.get_docstring(ast.parse(init.read_text(encoding="utf-8"))) or ""
        missing = sorted(p.stem for p in (package / sub).glob("*.py")
                         if p.name != "__init__.py" and f"``{p.stem}``" not in doc)
        if missing:
            out[sub] = missing
    return out


def untested_modules(package, tests):
    """Engine and training modules with no ``tests/test_X.py`` nor
    ``tests/test_<subpackage>_X.py``."""
    have = {p.stem for p in tests.glob("test_*.py")}
    out = []
    for path in modules(package):
        rel = path.relative_to(package).with_suffix("").parts
        if rel[-1] == "__init__" or rel[0] == "notebook":
            continue
        if not {"test_" + rel[-1], "test_" + "_".join(rel)} & have:
            out.append("/".join(rel) + ".py")
    return out


def is_engine(path, package):
    rel = path.relative_to(package).parts
    return rel[0] not in LAYERS


def engine_imports_of(package, layer):
    """``{engine module: [imports of nbtape.<layer>]}``."""
    target = f"{package.name}.{layer}"
    out = {}
    for path in modules(package):
        if not is_engine(path, package):
            continue
        bad = sorted({m for m in _imported(path, package)
                      if m == target or m.startswith(target + ".")})
        if bad:
            out[dotted(path, package)] = bad
    return out


# the package -------------------------------------------------------------------------------
def test_no_two_modules_share_a_file_name():
    assert shared_file_names(PACKAGE) == {}


def test_the_engine_lives_in_its_subpackages():
    assert misplaced_modules(PACKAGE) == []


def test_no_module_name_is_prefixed_with_its_folder():
    assert prefixed_names(PACKAGE) == []


def test_each_subpackage_docstring_names_its_modules():
    # the docstring is the reading order a newcomer follows: it must name every module
    assert unlisted_modules(PACKAGE) == {}


def test_every_engine_module_has_a_test_module_found_by_its_name():
    assert untested_modules(PACKAGE, TESTS) == []


def test_no_module_is_over_the_line_limit():
    assert long_modules(PACKAGE) == {}


def test_no_engine_function_is_over_80_lines():
    # GradientTape.record and dispatch.apply were 125 and 88 lines doing six things each
    assert long_functions(PACKAGE) == {}


def test_the_function_length_check_works(tmp_path):
    pkg = tmp_path / "pkg"
    (pkg / "notebook").mkdir(parents=True)
    body = "def f():\n" + "    x = 1\n" * 81
    (pkg / "m.py").write_text(body)
    (pkg / "notebook" / "n.py").write_text(body)      # the notebook layer is not counted
    assert long_functions(pkg) == {"pkg/m.py:f": 82}


def test_no_public_name_is_defined_in_two_modules():
    assert names_defined_twice(PACKAGE, SHARED_NAMES) == {}


def test_every_shared_name_is_still_shared():
    # an allowance that no longer covers anything should go
    both = names_defined_twice(PACKAGE)
    assert sorted(n for n in SHARED_NAMES if n not in both) == []


def test_the_engine_never_imports_the_training_pieces():
    assert engine_imports_of(PACKAGE, "training") == {}


def test_the_training_pieces_are_where_users_find_them():
    import nbtape as nt
    for name, (module, _) in nt._LAZY.items():
        if name in ("optimizers", "losses", "nn", "layers", "random", "datasets", "Sequential",
                    "clip_by_value", "clip_by_norm", "clip_by_global_norm", "global_norm"):
            assert module.startswith("nbtape.training."), name
            assert getattr(nt, name) is not None


# each check catches what it looks for ------------------------------------------------------
def _package(tmp_path, files):
    pkg = tmp_path / "pkg"
    for rel, text in files.items():
        path = pkg / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return pkg


def test_the_checks_catch_their_faults(tmp_path):
    pkg = _package(tmp_path, {
        "__init__.py": "from .training import layers\n",
        "summary.py": "LISTED = 4\n\ndef html_table():\n    pass\n",
        "engine.py": "def f():\n    from .training.clip import clip\n    import pkg.training\n",
        "rules/__init__.py": "",
        "rules/ops.py": "from .. import training\nfrom ..training import nn\n",
        "training/__init__.py": "",
        "training/clip.py": "from ..engine import f\n" + "x = 1\n" * 600,
        "training/layers.py": "class Dense:\n    pass\n",
        "notebook/__init__.py": "",
        "notebook/summary.py": "LISTED = 12\n_private = 1\n",
        "notebook/table.py": "from ..summary import html_table\ndef html_table(rows):\n    pass\n",
        "notebook/other.py": "def _private():\n    pass\nDense = None\nPI, E = 3.14, 2.72\n",
        "notebook/same.py": "PI, E = 3.14, 2.72\ng(1).attr = 2\n",
        "notebook/more.py": "def g():\n    pass\n",
    })
    assert shared_file_names(pkg) == {"summary.py": ["pkg/notebook/summary.py",
                                                     "pkg/summary.py"]}
    assert long_modules(pkg) == {"pkg/training/clip.py": 601}
    assert names_defined_twice(pkg) == {
        "LISTED": ["pkg.notebook.summary", "pkg.summary"],
        "html_table": ["pkg.notebook.table", "pkg.summary"],
        "Dense": ["pkg.notebook.other", "pkg.training.layers"],
    }
    assert names_defined_twice(pkg, allowed={"LISTED", "html_table", "Dense"}) == {}
    assert engine_imports_of(pkg, "training") == {
        "pkg": ["pkg.training", "pkg.training.layers"],
        "pkg.engine": ["pkg.training", "pkg.training.clip", "pkg.training.clip.clip"],
        "pkg.rules.ops": ["pkg.training", "pkg.training.nn"],
    }


def test_the_subpackage_checks_catch_their_faults(tmp_path):
    pkg = _package(tmp_path, {
        "__init__.py": "", "extend.py": "", "engine.py": "",
        "core/__init__.py": '"""- ``state``: the stack."""', "core/state.py": "",
        "core/tensor.py": "", "tape/__init__.py": '"""``records``"""',
        "tape/records.py": "", "tape/tape_view.py": "", "transforms/__init__.py": "",
        "diagnostics/__init__.py": "", "display/__init__.py": "", "rules/__init__.py": "",
        "rules/ufuncs.py": "", "extras/__init__.py": "", "notebook/__init__.py": "",
        "notebook/magics.py": "",
    })
    tests = tmp_path / "tests"
    tests.mkdir()
    for name in ("test_state.py", "test_rules_ufuncs.py", "test_tape_view.py"):
        (tests / name).write_text("")
    assert misplaced_modules(pkg) == ["engine.py", "extras/"]
    assert prefixed_names(pkg) == ["pkg/tape/tape_view.py"]
    assert unlisted_modules(pkg) == {"core": ["tensor"], "tape": ["tape_view"],
                                     "rules": ["ufuncs"]}
    assert untested_modules(pkg, tests) == ["core/tensor.py", "engine.py", "extend.py",
                                            "tape/records.py"]
