"""nbtape as a package: its metadata, its documents, and the built wheel in a fresh venv.

The slow test does what a student's `pip install nbtape` does: build the sdist and the
wheel with `python -m build`, install the wheel (not editable) in a fresh virtual
environment, draw a picture and run the `%%tape` magic in a real IPython shell there;
then take away every layout program and check the picture becomes its DOT source and
one line on how to get pictures, not a traceback.
"""
import os
import re
import sys
import tarfile
import textwrap
import venv
import zipfile
from importlib import metadata
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.version import Version

import nbtape as nt
from gradcheck import run_checked

if sys.version_info >= (3, 11):
    import tomllib
else:
    import tomli as tomllib

ROOT = Path(__file__).resolve().parent.parent
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())
PROJECT = PYPROJECT["project"]


def _requirement(name, group=None):
    reqs = PROJECT["dependencies"] if group is None else PROJECT["optional-dependencies"][group]
    found = [Requirement(r) for r in reqs if Requirement(r).name == name]
    assert len(found) == 1, f"{name} is listed {len(found)} times in {group or 'dependencies'}"
    return found[0]


def _env(sys_platform, machine, python="3.11"):
    return {"sys_platform": sys_platform, "platform_machine": machine,
            "python_version": python, "platform_system": "", "os_name": "posix",
            "implementation_name": "cpython", "platform_python_implementation": "CPython"}


# metadata --------------------------------------------------------------------------------
def test_the_licence_is_mit_in_spdx_form_and_ships():
    assert PROJECT["license"] == "MIT"          # an SPDX expression, not the old table
    assert "LICENSE" in PROJECT["license-files"]
    text = (ROOT / "LICENSE").read_text()
    assert text.startswith("MIT License") and "WITHOUT WARRANTY OF ANY KIND" in text
    # setuptools reads the SPDX string and license-files from 77 on
    backend = [Requirement(r) for r in PYPROJECT["build-system"]["requires"]]
    setuptools = [r for r in backend if r.name == "setuptools"][0]
    assert "76.9" not in setuptools.specifier and "77.0" in setuptools.specifier


def test_classifiers_name_the_audience_and_the_pythons_of_requires_python():
    classifiers = set(PROJECT["classifiers"])
    assert {"Framework :: Jupyter", "Intended Audience :: Education",
            "Intended Audience :: Science/Research"} <= classifiers
    versions = sorted(c.rsplit(" ", 1)[1] for c in classifiers
                      if re.fullmatch(r"Programming Language :: Python :: 3\.\d+", c))
    assert versions == ["3.10", "3.11", "3.12", "3.13"]
    assert PROJECT["requires-python"] == ">=3.10"
    assert not any(c.startswith("License ::") for c in classifiers), \
        "PEP 639: the SPDX license field replaces licence classifiers"


@pytest.mark.parametrize("env, installs", [
    (_env("linux", "x86_64"), True),
    (_env("linux", "aarch64"), True),
    (_env("darwin", "arm64"), True),
    (_env("darwin", "x86_64"), True),
    (_env("win32", "AMD64"), True),
    (_env("win32", "ARM64"), True),
    (_env("emscripten", "wasm32"), False),   # Pyodide, JupyterLite
    (_env("linux", "armv7l"), False),        # 32-bit Raspberry Pi OS
    (_env("linux", "i686"), False),
    (_env("linux", "ppc64le"), False),
    (_env("freebsd14", "amd64"), False),
])
def test_graphviz_pure_is_required_only_where_it_has_wheels(env, installs):
    req = _requirement("graphviz-pure")
    assert req.marker is not None and req.marker.evaluate(env) is installs
    # the graphviz package (pure Python) installs everywhere
    assert _requirement("graphviz").marker is None


def test_this_machine_has_graphviz_pure_when_the_marker_says_so():
    try:
        metadata.version("graphviz-pure")
        installed = True
    except metadata.PackageNotFoundError:
        installed = False
    if _requirement("graphviz-pure").marker.evaluate():
        assert installed, "pyproject.toml requires graphviz-pure here, but it is missing"


def test_the_extras_hold_what_the_code_and_tutorials_import():
    extras = PROJECT["optional-dependencies"]
    notebook = {Requirement(r).name for r in extras["notebook"]}
    assert {"ipython", "ipywidgets", "anywidget", "matplotlib"} <= notebook
    lab = [Requirement(r) for r in extras["lab"]]
    assert {r.name for r in lab} == {"nbtape", "jupyterlab"}
    assert [r.extras for r in lab if r.name == "nbtape"] == [{"notebook"}]
    imported = _imports_of_package() | _imports_of_tutorials()
    core = {Requirement(r).name for r in PROJECT["dependencies"]} - {"graphviz-pure"}
    # (graphviz-pure is a program nbtape runs, nbtape/notebook/render.py, not a module)
    for dist in notebook | core:
        module = {"ipython": "IPython"}.get(dist, dist.replace("-", "_"))
        assert module in imported, f"{dist} is required but neither nbtape nor a tutorial " \
                                   f"imports {module}"


def _imports_of_package():
    names = set()
    for path in (ROOT / "nbtape").rglob("*.py"):
        names |= _top_level_imports(path.read_text())
    return names


def _imports_of_tutorials():
    import json
    names = set()
    for path in (ROOT / "notebooks").glob("*.ipynb"):
        for cell in json.loads(path.read_text())["cells"]:
            if cell["cell_type"] == "code":
                names |= _top_level_imports("".join(cell["source"]))
    return names


def _top_level_imports(code):
    return set(re.findall(r"^\s*(?:import|from)\s+([A-Za-z_]\w*)", code, re.M))


def test_changelog_has_this_version():
    changelog = (ROOT / "CHANGELOG.md").read_text()
    assert re.search(rf"^## {re.escape(PROJECT['version'])}\b", changelog, re.M)


# documents -------------------------------------------------------------------------------
DOCUMENTS = [ROOT / "README.md", ROOT / "CHANGELOG.md", *sorted((ROOT / "docs").glob("*.md"))]


@pytest.mark.parametrize("doc", DOCUMENTS, ids=lambda p: str(p.relative_to(ROOT)))
def test_documents_link_only_inside_the_repository(doc):
    text = doc.read_text()
    assert "../shared" not in text
    for target in re.findall(r"\]\(([^)\s]+)\)", text):
        if target.startswith("#"):
            continue
        assert "://" not in target, f"{doc.name} links outside the repository: {target}"
        path = (doc.parent / target.split("#")[0]).resolve()
        assert ROOT in path.parents and path.exists(), f"{doc.name}: broken link {target}"


def test_readme_says_how_users_install_and_keeps_the_contributor_commands():
    readme = (ROOT / "README.md").read_text()
    assert "pip install nbtape" in readme
    assert 'pip install "nbtape[notebook]"' in readme
    assert 'python3 -m pip install -e ".[lab]" && python3 -m jupyter lab notebooks/' in readme
    assert "bash tests/run.sh" in readme


def test_api_reference_names_only_what_exists_and_plans_the_rest():
    api = (ROOT / "docs" / "api.md").read_text()
    built = api
    for name in set(re.findall(r"`nt\.([A-Za-z_][\w.]*)", built)):
        obj = nt
        for part in name.split("."):
            assert hasattr(obj, part), f"docs/api.md names nt.{name}, which does not exist"
            obj = getattr(obj, part)
    # everything once listed as planned is built: no "Planned" section is left
    assert "## Planned" not in api and "nt.recompute_grad" in built
    assert "| other array types |" in built
    assert hasattr(nt.Tensor, "data") and hasattr(nt.Variable, "data")
    # nbtape.extend: every name its section documents exists there
    import nbtape.extend as extend
    section = built.split("## Adding a function: `nbtape.extend`")[1].split("\n## ")[0]
    for name in re.findall(r"^\| `(\w+)\(", section, re.M):
        assert callable(getattr(extend, name, None)), f"docs/api.md names extend.{name}"
    assert set(extend.__all__) <= set(re.findall(r"`(\w+)\(", section))


# the built package -----------------------------------------------------------------------
SMOKE = textwrap.dedent('''
    import os, sys
    import numpy as np
    import nbtape as nt
    from IPython.core.interactiveshell import InteractiveShell
    from IPython.utils.capture import capture_output

    assert "site-packages" in nt.__file__, nt.__file__
    x = nt.Variable(3.0, name="x")
    with nt.GradientTape() as tape:
        y = np.sin(x) * x ** 2
    g = tape.gradient(y, x)
    assert abs(float(g) - (np.cos(3.0) * 9 + 6 * np.sin(3.0))) < 1e-12
    (x_train, _), (x_test, _) = nt.datasets.load_digits()
    assert x_train.shape == (1438, 64) and x_test.shape == (359, 64)

    shell = InteractiveShell.instance()
    shell.run_line_magic("load_ext", "nbtape")
    assert shell.run_cell("import nbtape as nt\\nw = nt.Variable(2.0, name='w')").success
    with capture_output() as cap:
        result = shell.run_cell("%%tape t --graph --grad z\\nz = w * w")
    assert result.success, result.error_in_exec
    assert float(shell.user_ns["t"].gradient(shell.user_ns["z"], shell.user_ns["w"])) == 4.0
    data, _ = shell.display_formatter.format(tape.graph())
    shown = [o.data for o in cap.outputs]
    mode = sys.argv[1]
    if mode == "pictures":
        assert data["image/png"][:4] == b"\\x89PNG", sorted(data)
        assert "<svg" in data["image/svg+xml"]
        assert any("image/png" in d and "image/svg+xml" in d for d in shown), shown
    else:
        assert not any(k.startswith("image/") for k in data), sorted(data)
        first, rest = data["text/plain"].split("\\n", 1)
        assert "pip install graphviz-pure" in first and rest.startswith("digraph"), first
        assert any(d.get("text/plain", "").startswith(first) for d in shown), shown
    assert not cap.stderr, cap.stderr
    print("smoke ok", mode)
''')


@pytest.mark.slow
def test_the_built_wheel_installs_and_runs_in_a_fresh_venv(tmp_path, built_wheel):
    clean = {k: v for k, v in os.environ.items()
             if k not in ("PYTHONPATH", "VIRTUAL_ENV", "NBTAPE_GRAPHVIZ")}
    wheel = built_wheel
    dist = wheel.parent
    version = PROJECT["version"]
    sdist = dist / f"nbtape-{version}.tar.gz"
    assert wheel.name == f"nbtape-{version}-py3-none-any.whl" and sdist.is_file(), \
        sorted(p.name for p in dist.iterdir())

    with zipfile.ZipFile(wheel) as zf:
        names = set(zf.namelist())
        meta = zf.read(f"nbtape-{version}.dist-info/METADATA").decode()
    assert f"nbtape-{version}.dist-info/licenses/LICENSE" in names
    assert {"nbtape/training/data/digits.csv.gz", "nbtape/training/data/README.md"} <= names
    assert {f"nbtape/notebook/widgets/front/{w}.js" for w in ("player", "inspector",
                                                             "monitor")} <= names
    assert "nbtape/notebook/widgets/front/widgets.css" in names
    assert not any(n.startswith(("tests/", "notebooks/", "bench/")) for n in names)
    # the tutorials, without their solutions (tests/test_exercises_learner_copy.py)
    assert "nbtape/notebook/tutorials/03_gradient_tape_basics.ipynb" in names
    assert "License-Expression: MIT" in meta and "Classifier: Framework :: Jupyter" in meta
    assert re.search(r"Requires-Dist: graphviz-pure>=0\.2; .*sys_platform == \"darwin\"", meta)
    assert 'Requires-Dist: jupyterlab>=4; extra == "lab"' in meta
    with tarfile.open(sdist) as tf:
        members = {m.name.split("/", 1)[1] for m in tf.getmembers() if "/" in m.name}
    assert {"LICENSE", "README.md", "pyproject.toml",
            "nbtape/training/data/digits.csv.gz"} <= members

    env_dir = tmp_path / "user-env"
    # This interpreter's pip installs into the new venv (pip >= 22.3): no pip to set up there.
    outside = Version(metadata.version("pip")) >= Version("22.3")
    venv.EnvBuilder(with_pip=not outside).create(env_dir)
    bindir = env_dir / ("Scripts" if os.name == "nt" else "bin")
    py = bindir / ("python.exe" if os.name == "nt" else "python")
    pip = [sys.executable, "-m", "pip", "--python", py] if outside else [py, "-m", "pip"]
    # the pins Binder and the suite use, so the test checks the wheel, not today's releases
    run_checked([*pip, "install", "-q", "-c", ROOT / "binder" / "requirements.txt",
          f"{wheel}[notebook]"], env=clean)
    work = tmp_path / "work"               # away from the checkout, so its nbtape is not seen
    work.mkdir()
    (work / "smoke.py").write_text(SMOKE)
    out = run_checked([py, "smoke.py", "pictures"], cwd=work, env=clean)
    assert "smoke ok pictures" in out.stdout

    # neither graphviz-pure nor a system dot: the DOT source and one line, no traceback
    run_checked([*pip, "uninstall", "-q", "-y", "graphviz-pure"], env=clean)
    bare = dict(clean, PATH=str(bindir))
    out = run_checked([py, "smoke.py", "no-pictures"], cwd=work, env=bare)
    assert "smoke ok no-pictures" in out.stdout and "Traceback" not in out.stderr
