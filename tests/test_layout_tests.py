"""The test suite's own rules, read from its source (nothing is imported or run):

- no test module imports another test module (nor conftest): shared helpers live in
  ``tests/gradcheck/`` (a package), and a helper module beside the unit tests
  serves one test module only;
- no test module keeps a random generator at module level (nor seeds numpy's or
  Python's global one there): every test seeds its own, so it draws the same numbers
  whatever ran before it (the ``rng`` and ``draws`` fixtures, or a generator made in the
  test).

``tests/browser`` and ``tests/lite`` are packages whose harness modules (a browser, a
server) their tests share; the first two rules hold there too.
"""
import ast
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent
SHARED = "gradcheck"                      # the one helper module every test may import
# what makes a random generator: numpy's, Python's, and gradcheck's Draws
GENERATORS = {"default_rng", "RandomState", "Generator", "Random", "SystemRandom", "Draws",
              "PCG64", "PCG64DXSM", "MT19937", "Philox", "SFC64"}
SEEDERS = {"seed"}                        # np.random.seed / random.seed: global state


def suite_modules():
    return sorted(p for p in TESTS.rglob("test_*.py") if "__pycache__" not in p.parts)


def local_modules(folder):
    """The importable names of the .py files in ``folder`` (one level)."""
    return {p.stem for p in folder.glob("*.py")}


def imported_names(tree, folder):
    """(line, dotted name) of every module an AST imports, relative imports resolved
    against ``folder`` (the test module's own), ``importlib.import_module("x")`` and
    ``__import__("x")`` with a literal name included."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, a.name) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:                # from . import x / from .x import y
                pkg = folder
                for _ in range(node.level - 1):
                    pkg = pkg.parent
                prefix = ".".join(p for p in (pkg.name, base) if p)
                found.append((node.lineno, prefix))
                found += [(node.lineno, f"{prefix}.{a.name}") for a in node.names]
            else:
                found.append((node.lineno, base))
                found += [(node.lineno, f"{base}.{a.name}") for a in node.names]
        elif (isinstance(node, ast.Call) and _called_name(node.func) in ("import_module", "__import__")
              and node.args and isinstance(node.args[0], ast.Constant)
              and isinstance(node.args[0].value, str)):
            found.append((node.lineno, node.args[0].value))
        elif (isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "pytest_plugins"
                                                    for t in node.targets)):
            for c in ast.walk(node.value):
                if isinstance(c, ast.Constant) and isinstance(c.value, str):
                    found.append((node.lineno, c.value))
    return found


def forbidden_imports(source, folder, name):
    """Where the test module ``name`` (its source, its folder) imports a test module or
    conftest: a list of 'line N: module' strings."""
    bad = {}
    for line, dotted in imported_names(ast.parse(source), folder):
        for part in dotted.split("."):
            if part == "conftest" or (part.startswith("test_") and part != name):
                bad.setdefault(line, f"line {line}: {part}")
    return list(bad.values())


def _called_name(func):
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute):
        return func.attr
    return None


def _makes_generator(value):
    """Is ``value`` an expression whose result is a random generator (not numbers drawn
    from a throwaway one, like ``default_rng(3).uniform(size=4)``)?"""
    if isinstance(value, ast.Call):
        return _called_name(value.func) in GENERATORS
    if isinstance(value, (ast.Tuple, ast.List)):
        return any(_makes_generator(e) for e in value.elts)
    return False


def _fixture_scope(func):
    for d in func.decorator_list:
        if isinstance(d, ast.Call) and _called_name(d.func) == "fixture":
            for kw in d.keywords:
                if kw.arg == "scope" and isinstance(kw.value, ast.Constant):
                    return kw.value.value
    return "function"


def module_level_generators(source):
    """Where a module keeps random state outside its tests: a generator bound at module
    or class level, a global seed set at import, or a fixture wider than one test that
    makes a generator.  A list of 'line N: what' strings."""
    bad = []

    def visit(body, where):
        for node in body:
            if isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None \
                    and _makes_generator(node.value):
                bad.append(f"line {node.lineno}: a random generator at {where} level")
            elif isinstance(node, ast.Expr) and isinstance(node.value, ast.Call) \
                    and _called_name(node.value.func) in SEEDERS:
                bad.append(f"line {node.lineno}: a global seed set at import")
            elif isinstance(node, ast.ClassDef):
                visit(node.body, "class")
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                if _fixture_scope(node) != "function" and any(
                        _makes_generator(n) for n in ast.walk(node) if isinstance(n, ast.Call)):
                    bad.append(f"line {node.lineno}: a {_fixture_scope(node)}-scoped fixture "
                               "makes a random generator")
            elif isinstance(node, (ast.If, ast.Try, ast.With, ast.For)):
                visit(node.body, where)
                visit(getattr(node, "orelse", []), where)
                for h in getattr(node, "handlers", []):
                    visit(h.body, where)
    visit(ast.parse(source).body, "module")
    return bad


# --- the suite keeps the rules -----------------------------------------------------------------
@pytest.mark.parametrize("path", suite_modules(), ids=lambda p: str(p.relative_to(TESTS)))
def test_no_test_module_imports_another(path):
    bad = forbidden_imports(path.read_text(), path.parent, path.stem)
    assert not bad, (f"{path.relative_to(TESTS)} imports a test module ({'; '.join(bad)}): "
                     f"move what it needs into tests/{SHARED}/ and import it from there")


@pytest.mark.parametrize("path", suite_modules(), ids=lambda p: str(p.relative_to(TESTS)))
def test_no_test_module_keeps_a_random_generator_outside_its_tests(path):
    bad = module_level_generators(path.read_text())
    assert not bad, (f"{path.relative_to(TESTS)} keeps random state outside its tests "
                     f"({'; '.join(bad)}): seed a generator inside each test (the rng or "
                     "draws fixture)")


def test_helper_modules_beside_the_unit_tests_serve_one_test_module_each():
    helpers = local_modules(TESTS) - {SHARED, "conftest"} - {p.stem for p in suite_modules()}
    users = {h: set() for h in helpers}
    for path in TESTS.glob("test_*.py"):
        for _, dotted in imported_names(ast.parse(path.read_text()), TESTS):
            if dotted in helpers:
                users[dotted].add(path.stem)
    shared = {h: sorted(u) for h, u in users.items() if len(u) > 1}
    assert not shared, (f"helper modules used by several test modules: {shared}; "
                        f"shared helpers belong in tests/{SHARED}/")


def test_the_conftest_files_import_no_test_module():
    for path in TESTS.rglob("conftest.py"):
        bad = [d for _, d in imported_names(ast.parse(path.read_text()), path.parent)
               if any(p.startswith("test_") for p in d.split("."))]
        assert not bad, f"{path.relative_to(TESTS)} imports test modules: {bad}"


# --- the checks see what they look for -----------------------------------------------------------
@pytest.mark.parametrize("source", [
    "from test_rules_shapes import since_numpy",
    "import test_tape",
    "import test_tape as t",
    "from tests.test_tape import check",
    "from tests import test_tape",
    "from .test_checks import x",
    "from . import test_checks",
    "from conftest import rng",
    "import importlib\nm = importlib.import_module('test_tape')",
    "m = __import__('tests.test_tape')",
    "def f():\n    from test_rules_ufuncs import check_second",
    "pytest_plugins = ['tests.test_tape']",
])
def test_imports_of_test_modules_are_seen(source):
    assert forbidden_imports(source, TESTS, "test_here")


@pytest.mark.parametrize("source", [
    "from gradcheck import check_both",
    "import numpy as np\nimport nbtape as nt",
    "from . import checks\nfrom .notebooks import read",
    "from nbtape.core.registry import RULES",
])
def test_imports_of_helpers_and_libraries_pass(source):
    assert forbidden_imports(source, TESTS, "test_here") == []


@pytest.mark.parametrize("source", [
    "import numpy as np\nrng = np.random.default_rng(0)",
    "from numpy.random import default_rng\nRNG = default_rng()",
    "import numpy as np\nr = np.random.RandomState(1)",
    "import random\nR = random.Random(3)",
    "from gradcheck import Draws\ndraws = Draws(2)",
    "import numpy as np\nrng: object = np.random.default_rng(0)",
    "import numpy as np\na, b = np.random.default_rng(0), 1",
    "import numpy as np\nnp.random.seed(0)",
    "import random\nrandom.seed(1)",
    "import numpy as np\nclass TestX:\n    rng = np.random.default_rng(0)",
    "import numpy as np\nif True:\n    rng = np.random.default_rng(0)",
    "import numpy as np, pytest\n@pytest.fixture(scope='module')\ndef rng():\n"
    "    return np.random.default_rng(0)",
])
def test_random_state_outside_tests_is_seen(source):
    assert module_level_generators(source)


@pytest.mark.parametrize("source", [
    "import numpy as np\nW = np.random.default_rng(0).standard_normal((3, 5))",
    "import numpy as np\ndef test_x():\n    rng = np.random.default_rng(0)",
    "import numpy as np, pytest\n@pytest.fixture\ndef rng():\n    return np.random.default_rng(0)",
    "from gradcheck import Draws\ndef test_y():\n    draws = Draws(2)",
])
def test_random_state_inside_tests_passes(source):
    assert module_level_generators(source) == []
