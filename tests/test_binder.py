"""The Binder environment builds from binder/ alone and runs every tutorial notebook.

This does what repo2docker does (pip install -r binder/requirements.txt, then
binder/postBuild from the repository root) in a fresh virtual environment, then
runs the notebooks there with nbval, so a broken Binder is caught before a
student sees it.
"""
import os
import subprocess
import venv
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
BINDER = ROOT / "binder"


def _run(cmd, **kw):
    proc = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if proc.returncode != 0:
        raise AssertionError(f"{' '.join(map(str, cmd))} failed ({proc.returncode}):\n"
                             f"{proc.stdout[-4000:]}\n{proc.stderr[-4000:]}")
    return proc


def test_binder_files_are_what_repo2docker_reads():
    assert (BINDER / "requirements.txt").is_file()
    assert (BINDER / "runtime.txt").read_text().strip().startswith("python-3.")
    post = BINDER / "postBuild"
    assert os.access(post, os.X_OK), "binder/postBuild must be executable"
    # repo2docker ignores the root pyproject.toml when binder/ exists: postBuild must install nbtape
    assert "pip install" in post.read_text() and " ." in post.read_text()


@pytest.mark.slow
def test_notebooks_run_in_a_fresh_binder_environment(tmp_path):
    env_dir = tmp_path / "binder-env"
    venv.EnvBuilder(with_pip=True).create(env_dir)
    py = env_dir / "bin" / "python3"
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env["PATH"] = f"{env_dir / 'bin'}{os.pathsep}{env.get('PATH', '')}"
    _run([py, "-m", "pip", "install", "-q", "-r", BINDER / "requirements.txt"], env=env)
    _run([BINDER / "postBuild"], cwd=ROOT, env=env)
    # the test runner itself is not part of the Binder image
    _run([py, "-m", "pip", "install", "-q", "pytest", "nbval"], env=env)
    notebooks = sorted((ROOT / "notebooks").glob("*.ipynb"))
    assert notebooks, "no tutorial notebooks found"
    out = _run([py, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-o", "addopts=",
                "--nbval", "--nbval-current-env", "--nbval-sanitize-with",
                ROOT / "notebooks" / "sanitize.cfg", *notebooks],
               cwd=tmp_path, env=env)
    assert " passed" in out.stdout
    # nbtape came from this checkout, installed by postBuild (not from the repo path)
    where = _run([py, "-c", "import nbtape, sys; print(nbtape.__file__)"], cwd=tmp_path, env=env)
    assert "site-packages" in where.stdout or str(env_dir) in where.stdout, where.stdout
