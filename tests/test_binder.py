"""The Binder environment builds from binder/ alone and runs every tutorial notebook.

This does what repo2docker does (pip install -r binder/requirements.txt, then
binder/postBuild from the repository root) in a fresh virtual environment, then
runs the notebooks there with nbval, so a broken Binder is caught before a
student sees it.  binder/requirements.txt is also the one list of pinned versions:
the fast tests check that it agrees with pyproject.toml's requirements and that
the suite installs under it.
"""
import os
import re
import sys
from importlib import metadata
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from gradcheck import fresh_venv, run_checked

if sys.version_info >= (3, 11):
    import tomllib
else:
    import tomli as tomllib

ROOT = Path(__file__).resolve().parent.parent
BINDER = ROOT / "binder"
# Pinned although nbtape does not name them: they decide how the notebooks run and show.
PINNED_FOR_THE_STACK = {"ipykernel": "jupyterlab", "jupyterlab-widgets": "ipywidgets"}


def _pins():
    """The pins of binder/requirements.txt, as Requirements (comments dropped)."""
    lines = (BINDER / "requirements.txt").read_text().splitlines()
    return [Requirement(line.split(" #")[0]) for line in lines
            if line.strip() and not line.lstrip().startswith("#")]


def _nbtape_requirements(extra="lab"):
    """Every requirement nbtape[extra] brings, following nbtape[...] self-references."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    out, todo, seen = [Requirement(r) for r in project["dependencies"]], [extra], set()
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        for r in map(Requirement, project["optional-dependencies"][name]):
            if r.name == "nbtape":
                todo.extend(r.extras)
            else:
                out.append(r)
    return out


def _binder_env(python):
    return {"python_version": python, "python_full_version": python + ".0",
            "sys_platform": "linux", "platform_machine": "x86_64", "platform_system": "Linux",
            "os_name": "posix", "implementation_name": "cpython",
            "platform_python_implementation": "CPython", "extra": ""}


def _runtime_python():
    return re.fullmatch(r"python-(3\.\d+)", (BINDER / "runtime.txt").read_text().strip())[1]


PYTHONS = sorted({_runtime_python(), "3.10", "3.11", "3.12", "3.13"})


def test_binder_files_are_what_repo2docker_reads():
    assert (BINDER / "requirements.txt").is_file()
    assert (BINDER / "runtime.txt").read_text().strip().startswith("python-3.")
    post = BINDER / "postBuild"
    assert os.access(post, os.X_OK), "binder/postBuild must be executable"
    # repo2docker ignores the root pyproject.toml when binder/ exists: postBuild installs
    # nbtape, held to the same pins
    assert 'pip install -c binder/requirements.txt ".[lab]"' in post.read_text()


@pytest.mark.parametrize("python", PYTHONS)
def test_the_pins_cover_nbtape_lab_within_pyprojects_ranges(python):
    env = _binder_env(python)
    pins = {}
    for pin in _pins():
        assert len(pin.specifier) == 1 and next(iter(pin.specifier)).operator == "==", \
            f"binder/requirements.txt must pin exact versions: {pin}"
        if pin.marker is None or pin.marker.evaluate(env):
            name = canonicalize_name(pin.name)
            assert name not in pins, f"two pins for {name} on Python {python}"
            pins[name] = next(iter(pin.specifier)).version
    needed = {}
    for req in _nbtape_requirements("lab"):
        if req.marker is None or req.marker.evaluate(env):
            needed[canonicalize_name(req.name)] = req
    for name, req in needed.items():
        assert name in pins, f"nbtape[lab] requires {req}, which binder/requirements.txt " \
                             f"does not pin for Python {python}"
        assert req.specifier.contains(pins[name], prereleases=True), \
            f"binder pins {name}=={pins[name]}, outside pyproject.toml's {req}"
    unused = set(pins) - set(needed) - set(PINNED_FOR_THE_STACK)
    assert not unused, f"binder/requirements.txt pins {sorted(unused)}, which nbtape does not use"
    assert set(PINNED_FOR_THE_STACK) <= set(pins)


def test_the_stack_pins_are_requirements_of_what_nbtape_needs():
    for name, parent in PINNED_FOR_THE_STACK.items():
        try:
            requires = metadata.requires(parent) or []
        except metadata.PackageNotFoundError:
            pytest.skip(f"{parent} is not installed here")
        assert name in {canonicalize_name(Requirement(r).name) for r in requires}, \
            f"{parent} no longer requires {name}: drop its pin from binder/requirements.txt"


def test_the_suite_installs_under_the_binder_pins():
    run_sh = (ROOT / "tests" / "run.sh").read_text()
    assert re.search(r'pip install .*-c binder/requirements\.txt .*"\.\[test\]"', run_sh)


def test_this_environment_has_the_binder_pins():
    # tests/run.sh installs under the pins; a mismatch here means the suite is not
    # testing what Binder runs (run `bash tests/run.sh`, or pip install -c the file).
    env = dict(_binder_env(f"{sys.version_info[0]}.{sys.version_info[1]}"))
    env.update(sys_platform=sys.platform, platform_machine=__import__("platform").machine())
    wrong = []
    for pin in _pins():
        if pin.marker is not None and not pin.marker.evaluate(env):
            continue
        want = next(iter(pin.specifier)).version
        try:
            have = metadata.version(pin.name)
        except metadata.PackageNotFoundError:
            continue
        if have != want:
            wrong.append(f"{pin.name} {have} (binder pins {want})")
    assert not wrong, "installed versions differ from binder/requirements.txt: " + ", ".join(wrong)


@pytest.mark.slow
def test_notebooks_run_in_a_fresh_binder_environment(tmp_path):
    env_dir = tmp_path / "binder-env"
    py, env = fresh_venv(env_dir)
    run_checked([py, "-m", "pip", "install", "-q", "-r", BINDER / "requirements.txt"], env=env)
    run_checked([BINDER / "postBuild"], cwd=ROOT, env=env)
    # the test runner itself is not part of the Binder image
    run_checked([py, "-m", "pip", "install", "-q", "pytest", "nbval"], env=env)
    notebooks = sorted((ROOT / "notebooks").glob("*.ipynb"))
    assert notebooks, "no tutorial notebooks found"
    out = run_checked([py, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-o", "addopts=",
                "--nbval", "--nbval-current-env", "--nbval-sanitize-with",
                ROOT / "notebooks" / "sanitize.cfg", *notebooks],
               cwd=tmp_path, env=env)
    assert " passed" in out.stdout
    # nbtape came from this checkout, installed by postBuild (not from the repo path)
    where = run_checked([py, "-c", "import nbtape, sys; print(nbtape.__file__)"], cwd=tmp_path, env=env)
    assert "site-packages" in where.stdout or str(env_dir) in where.stdout, where.stdout
