"""nbtape supports numpy 1.26 as well as 2.x (pyproject: ``numpy>=1.26,<3``).

The rest of the suite runs on whatever numpy is installed, normally a 2.x.  This
test builds a fresh virtual environment with numpy 1.26.4, installs this checkout
there without its dependencies (so pip cannot upgrade numpy), and runs the engine
and rule tests in it, so a rule that needs a numpy 2 function, keyword or promotion
rule is caught before a numpy 1 user imports nbtape.
"""
from pathlib import Path

import numpy as np
import pytest

from gradcheck import fresh_venv, run_checked

ROOT = Path(__file__).resolve().parent.parent
TESTS = ROOT / "tests"
OLDEST_NUMPY = "1.26.4"

# The engine and its rules; the notebook layer (IPython, widgets) is left out, since
# it does not touch numpy beyond what these already exercise.
ENGINE_TESTS = sorted(TESTS.glob("test_rules_*.py")) + [TESTS / f"test_{name}.py" for name in (
    "smoke_rules", "gradient_tape", "tape_nesting", "seed_examples", "tensor", "variable", "forward",
    "custom", "functional", "jacobians", "explain", "dtypes", "check", "errors", "coverage",
    "clip", "losses", "nn", "layers", "random", "draws", "optimizers", "numerics",
    "check_numerics", "float_warnings",
    "records", "operators", "dispatch", "snapshot", "function", "trace", "program",
    "drawing")]


def _run(cmd, **kw):
    return run_checked(cmd, timeout=900, **kw)      # an old numpy's pip install can hang


@pytest.mark.slow
@pytest.mark.skipif(np.lib.NumpyVersion(np.__version__) < "2.0.0",
                    reason="already on numpy 1: the rest of the suite is this check")
def test_engine_and_rules_pass_on_numpy_1_26(tmp_path):
    env_dir = tmp_path / "numpy-1.26"
    py, env = fresh_venv(env_dir)
    _run([py, "-m", "pip", "install", "-q", f"numpy=={OLDEST_NUMPY}", "pytest", "hypothesis",
          "graphviz", "graphviz-pure"], env=env)
    _run([py, "-m", "pip", "install", "-q", "--no-deps", "-e", ROOT], env=env)
    where = _run([py, "-c", "import numpy, nbtape; print(numpy.__version__, nbtape.__file__)"],
                 cwd=tmp_path, env=env)
    version, path = where.stdout.split()
    assert version == OLDEST_NUMPY and Path(path).is_relative_to(ROOT), where.stdout
    # -o addopts= drops nbval and the notebooks; the rules' doctests still run
    out = _run([py, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-o", "addopts=",
                *ENGINE_TESTS, "--doctest-modules", ROOT / "nbtape" / "rules",
                # scipy's rules load only where scipy is (rules/__init__.py's load_late); this
                # venv has none, and their test module skips itself without it
                "--ignore", ROOT / "nbtape" / "rules" / "scipy_special.py"],
               cwd=ROOT, env=env)
    assert " passed" in out.stdout and " failed" not in out.stdout, out.stdout[-4000:]
