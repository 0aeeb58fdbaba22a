"""Each build extra carries what the README's command for it needs: proven in fresh venvs.

The rest of the suite runs in the development environment, where the `test` extra
brings JupyterLab and everything else along, so a build extra that lacks a package
its command needs goes unseen there.  Here each extra is installed alone into a new
virtual environment (no system site packages), from a wheel built once from this
checkout, and the README's command runs inside it:

- ``lite``: ``pip install -e ".[lite]"`` then ``python3 lite/build.py``;
- ``docs``: ``pip install -e ".[docs]"`` then ``python3 docs/build.py`` (which builds
  the JupyterLite site too).

Both environments are built side by side (pip waits on the network much of the
time); pip's own cache keeps a second run quick, and the builds reuse the npm
downloads that ``lite/build.py`` and ``docs/build.py`` cache.
"""
import concurrent.futures
import json

import pytest
from gradcheck import build_dist, fresh_venv, run_checked

from .site import REPO

pytestmark = pytest.mark.slow

# extra -> the README's build command after installing it (run from the checkout)
COMMANDS = {
    "lite": ["lite/build.py", "--output", "{out}/site"],
    "docs": ["docs/build.py", "--output", "{out}/html"],
}
NO_SITE_PACKAGES = "import sys, json; print(json.dumps([sys.prefix != sys.base_prefix, sys.path]))"


def build_with_extra(extra, folder, wheel):
    """Install ``wheel[extra]`` into a new venv under ``folder``, run the extra's command."""
    python, env = fresh_venv(folder / f"venv-{extra}")
    run_checked([python, "-m", "pip", "install", "-q", "--disable-pip-version-check",
                 f"nbtape[{extra}] @ {wheel.as_uri()}"], env=env)
    isolated, path = json.loads(run_checked([python, "-c", NO_SITE_PACKAGES], env=env,
                                            cwd=folder).stdout)
    out = folder / f"out-{extra}"
    cmd = [python] + [a.format(out=out) for a in COMMANDS[extra]]
    proc = run_checked(cmd, env=env, cwd=REPO)
    return {"isolated": isolated, "path": path, "out": out, "log": proc.stdout + proc.stderr}


@pytest.fixture(scope="module")
def builds(tmp_path_factory):
    folder = tmp_path_factory.mktemp("extras")
    wheel = build_dist(folder / "dist")
    with concurrent.futures.ThreadPoolExecutor(max_workers=len(COMMANDS)) as pool:
        jobs = {extra: pool.submit(build_with_extra, extra, folder, wheel) for extra in COMMANDS}
        yield {extra: job.exception() or job.result() for extra, job in jobs.items()}


def result(builds, extra):
    res = builds[extra]
    if isinstance(res, BaseException):
        pytest.fail(f"`pip install \".[{extra}]\"` then `python3 {COMMANDS[extra][0]}` in a "
                    f"fresh virtual environment failed:\n{res}", pytrace=False)
    assert res["isolated"], "the environment is not a virtual environment"
    assert not [p for p in res["path"] if "site-packages" in p and "venv-" not in p], \
        f"the venv sees another environment's packages: {res['path']}"
    return res


def test_the_lite_extra_builds_the_jupyterlite_site(builds):
    res = result(builds, "lite")
    site = res["out"] / "site"
    assert (site / "jupyter-lite.json").exists(), res["log"][-3000:]
    # the tutorials are in the site's contents (jupyter_server indexes them)
    listing = json.loads((site / "api" / "contents" / "all.json").read_text())
    assert any(f["name"].startswith("01_") for f in listing["content"]), listing


def test_the_docs_extra_builds_the_documentation_with_the_site(builds):
    res = result(builds, "docs")
    html = res["out"] / "html"
    assert (html / "index.html").exists(), res["log"][-3000:]
    assert (html / "lite" / "jupyter-lite.json").exists(), res["log"][-3000:]
