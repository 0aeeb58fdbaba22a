"""The notebook layer in the environments classrooms use: fresh virtual environments.

The rest of the suite runs on the development environment's IPython and
ipywidgets.  Here each environment below is built from scratch (pip's cache keeps
that quick), a wheel built once from this checkout is installed into each the way a
user installs nbtape, and the magic tests, the widget tests and the real-kernel runs
of the tutorials (``test_kernel_cells.py``, nbclient) run inside it:

- ``colab``: Google Colab's stack (its backend-info list, August 2026): Python 3.13,
  IPython 7.34.0, ipywidgets 7.7.1 and numpy 2.1.3; installing nbtape must change none
  of them, and every tutorial in ``notebooks/`` runs there in a real kernel too
  (``colab_tutorials.py``; globbed, so a new tutorial is included).
- ``newest``: the newest IPython 9 and ipywidgets 8 that pip finds.
- ``python3.10``: the oldest Python nbtape supports, with the newest IPython and
  ipywidgets that support it (IPython 9 needs Python 3.11).

Python 3.11 is the development environment itself.  The environments are built in
parallel (pip spends much of its time waiting on the network); each test waits
for its own.  An interpreter this machine lacks is reported as a skip that names it.

Downloads are kept in a wheelhouse (``~/.cache/nbtape-tests/wheels``, or under
``$XDG_CACHE_HOME``) that later runs and the other environments reuse: pip's own
cache does not keep the registry's files on every machine.  Each environment
downloads only what the wheelhouse lacks (``pip download`` looks there first),
then installs offline from what it downloaded, without compiling bytecode.
"""
import concurrent.futures
import glob
import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parent.parent
TESTS = ROOT / "tests"

# name -> (Python minor version, requirements installed before nbtape, expected versions
# of IPython, ipywidgets and numpy: prefixes)
ENVIRONMENTS = {
    "colab": ("3.13", ["ipython==7.34.0", "ipywidgets==7.7.1", "numpy==2.1.3"],
              ("7.34.0", "7.7.1", "2.1.3")),
    "newest": ("3.12", ["ipython>=9,<10", "ipywidgets>=8,<9"], ("9.", "8.", "2.")),
    "python3.10": ("3.10", ["ipython", "ipywidgets>=8,<9"], ("8.", "8.", "2.")),
}
# tests an environment runs besides INSIDE: Colab's runs the tutorials (a minute or two)
EXTRA_INSIDE = {"colab": ["tests/colab_tutorials.py"]}
# What the tests below need besides IPython and ipywidgets (the tutorials draw with
# matplotlib; the widgets' front ends are anywidget's, which nbtape[notebook] brings and
# which supports ipywidgets 7.6 and later); nothing else of the development extras.
TOOLS = ["ipykernel", "nbclient", "nbformat", "pytest", "matplotlib", "anywidget"]
# nbtape's own requirements, so that its wheel installs offline too
NBTAPE = ["numpy>=1.26,<3", "graphviz>=0.20", "graphviz-pure>=0.2"]
WHEELHOUSE = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache",
                  "nbtape-tests", "wheels")
INSIDE = (["tests/test_magics.py", "tests/test_cell_runner.py", "tests/test_kernel_cells.py"]
          + sorted(str(p.relative_to(ROOT)) for p in TESTS.glob("test_widgets_*.py"))
          + ["nbtape/notebook/cell_runner.py", "nbtape/notebook/magics.py",
             "nbtape/notebook/widgets"])
VERSIONS = ("import importlib.metadata as m, json, sys; print(json.dumps("
            "[m.version('ipython'), m.version('ipywidgets'), sys.version.split()[0], "
            "m.version('numpy')]))")


def find_python(minor):
    """An interpreter for Python ``minor`` ('3.12') that runs: a pyenv build, or on PATH.

    pyenv's shims are on PATH for every version it knows, but a shim only runs the
    versions selected in the shell, so each candidate is asked for its version.
    """
    root = os.environ.get("PYENV_ROOT", os.path.expanduser("~/.pyenv"))
    builds = sorted(glob.glob(os.path.join(root, "versions", f"{minor}.*", "bin", "python3")),
                    key=lambda p: [int(x) for x in re.findall(r"\d+", p.split("versions")[1])],
                    reverse=True)
    for candidate in builds + [shutil.which(f"python{minor}")]:
        if candidate is None:
            continue
        try:
            out = subprocess.run([candidate, "-c", "import sys; print(sys.version_info[:2])"],
                                 capture_output=True, text=True, timeout=60)
        except OSError:
            continue
        if out.returncode == 0 and out.stdout.strip() == str(tuple(map(int, minor.split(".")))):
            return candidate
    return None


class Failed(Exception):
    pass


def run(cmd, env, cwd=ROOT, timeout=900):
    proc = subprocess.run([str(c) for c in cmd], capture_output=True, text=True, cwd=cwd,
                          env=env, timeout=timeout)
    if proc.returncode != 0:
        raise Failed(f"{' '.join(map(str, cmd))} failed ({proc.returncode}):\n"
                     f"{proc.stdout[-6000:]}\n{proc.stderr[-4000:]}")
    return proc.stdout


def build_and_test(name, python, folder, wheel):
    """Build environment ``name`` in ``folder`` with ``python``, install nbtape's
    ``wheel`` in it, and run the tests there."""
    _, requirements, _ = ENVIRONMENTS[name]
    env_dir = folder / name
    run([python, "-m", "venv", env_dir], env=os.environ.copy())
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env["PATH"] = f"{env_dir / 'bin'}{os.pathsep}{env.get('PATH', '')}"
    py = env_dir / "bin" / "python"
    pip = [py, "-m", "pip", "--disable-pip-version-check"]
    downloads = folder / f"{name}-wheels"
    run(pip + ["download", "-q", "--find-links", WHEELHOUSE, "-d", downloads,
               *requirements, *TOOLS, *NBTAPE], env)
    keep(downloads)
    offline = ["install", "-q", "--no-compile", "--no-index", "--find-links", downloads]
    run(pip + offline + [*requirements, *TOOLS], env)
    before = json.loads(run([py, "-c", VERSIONS], env, cwd=folder))
    run(pip + offline + [wheel], env)                   # what `pip install nbtape` does
    after = json.loads(run([py, "-c", VERSIONS], env, cwd=folder))
    # and what `pip install "nbtape[notebook]"` would do to IPython and ipywidgets
    report = folder / f"{name}-notebook-extra.json"
    run(pip + ["install", "-q", "--dry-run", "--find-links", WHEELHOUSE, "--report", report,
               f"{wheel}[notebook]"], env)
    changes = {p["metadata"]["name"].lower(): p["metadata"]["version"]
               for p in json.loads(report.read_text())["install"]}
    out = run([py, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-o", "addopts=",
               "--doctest-modules", *INSIDE, *EXTRA_INSIDE.get(name, [])], env)
    return {"before": before, "after": after, "extra_changes": changes, "pytest": out}


def keep(downloads):
    """Add what pip downloaded to the wheelhouse (each file whole: others may be reading)."""
    WHEELHOUSE.mkdir(parents=True, exist_ok=True)
    for f in downloads.iterdir():
        target = WHEELHOUSE / f.name
        if not target.exists():
            part = WHEELHOUSE / f".{f.name}.{os.getpid()}.part"
            shutil.copyfile(f, part)
            os.replace(part, target)


@pytest.fixture(scope="module")
def environments(tmp_path_factory, built_wheel):
    folder = tmp_path_factory.mktemp("environments")
    # One wheel for all (the session's): pip installing the checkout itself would build it
    # in the checkout's build/ folder, and three of those builds side by side collide there.
    wheel = built_wheel
    pool = concurrent.futures.ThreadPoolExecutor(max_workers=len(ENVIRONMENTS))
    jobs = {}
    for name, (minor, _, _) in ENVIRONMENTS.items():
        python = find_python(minor)
        jobs[name] = (minor, python and pool.submit(build_and_test, name, python, folder, wheel))
    yield jobs
    pool.shutdown(wait=True, cancel_futures=True)


@pytest.mark.parametrize("name", list(ENVIRONMENTS))
def test_environment(environments, name):
    minor, job = environments[name]
    if job is None:
        pytest.skip(f"Python {minor} is not on this machine (not on PATH, not built by "
                    f"pyenv): environment {name!r} did not run")
    try:
        res = job.result()
    except Failed as e:
        pytest.fail(f"environment {name!r} (Python {minor}): {e}", pytrace=False)
    _, _, (want_ipython, want_widgets, want_numpy) = ENVIRONMENTS[name]
    ipython, widgets, python, numpy = res["after"]
    assert python.startswith(minor + ".")
    assert ipython.startswith(want_ipython) and widgets.startswith(want_widgets), res["after"]
    assert numpy.startswith(want_numpy), res["after"]
    # installing nbtape, or its notebook extra, keeps IPython, ipywidgets and numpy in place
    assert res["after"] == res["before"]
    assert not {"ipython", "ipywidgets", "numpy"} & set(res["extra_changes"]), \
        res["extra_changes"]
    out = res["pytest"]
    summary = out.strip().splitlines()[-1]
    assert " passed" in summary and "failed" not in summary and "error" not in summary, out
    print(f"{name}: Python {python}, IPython {ipython}, ipywidgets {widgets}, numpy {numpy}: "
          f"{summary}")
