"""The documentation site's own checks, without building it (the build and the browser
tests are ``tests/lite/test_docs_site.py``):

* every public name (``docs/apipages.py``'s inventory: the facade, ``nbtape.extend``,
  the training pieces, the notebook layer) has a docstring and an entry on an API page;
* the inventory misses no public name that the facade, ``nbtape.extend`` or the
  training modules have;
* the internal-link checker finds a broken link and a missing anchor;
* links written for the repository's folders are made right for the site;
* the release workflow is valid (GitHub's workflow schema) and builds, tests and
  publishes with PyPI's trusted publishing.
"""
import importlib.util
import inspect
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
RELEASE = REPO / ".github" / "workflows" / "release.yml"


def _load(name, path):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


# docs/build.py is a script, not a package (it puts docs/ on sys.path for apipages)
docs_build = _load("nbtape_docs_build", REPO / "docs" / "build.py")
apipages = docs_build.apipages


def test_every_public_name_has_a_docstring_and_a_page(tmp_path):
    groups = apipages.groups()
    assert apipages.missing_docstrings(groups) == []
    written = apipages.write_pages(tmp_path)
    for page, names in groups.items():
        text = (tmp_path / f"{page}.md").read_text()
        for qualname, _ in names:
            assert qualname in written[page]
            assert f"## `{qualname.rsplit('.', 1)[1]}`" in text, (page, qualname)
            assert qualname in text, (page, qualname)
    index = (tmp_path / "index.md").read_text()
    assert all(page in index for page in groups)


def test_a_public_name_without_a_docstring_is_found():
    def undocumented():
        pass

    def documented():
        """Has one."""
    assert apipages.missing_docstrings(
        {"p": [("m.undocumented", undocumented), ("m.documented", documented)]}) \
        == ["m.undocumented"]


def test_the_inventory_holds_every_public_name_of_the_package():
    import nbtape as nt
    import nbtape.extend
    import nbtape.notebook.widgets
    names = {q for group in apipages.groups().values() for q, _ in group}
    expected = {f"nbtape.{n}" for n in nt.__all__}
    expected |= {f"nbtape.{n}" for n, (_, attr) in nt._LAZY.items() if attr is not None}
    expected |= {f"nbtape.extend.{n}" for n in nbtape.extend.__all__}
    expected |= {f"nbtape.notebook.widgets.{n}" for n in nbtape.notebook.widgets.__all__}
    for sub in ("optimizers", "losses", "nn", "layers", "random", "datasets"):
        module = getattr(nt, sub)
        expected |= {f"nbtape.{sub}.{n}" for n, obj in vars(module).items()
                     if not n.startswith("_") and callable(obj)
                     and getattr(obj, "__module__", None) == module.__name__}
    assert expected - names == set()
    assert "nbtape.optimizers.Adam" in names and "nbtape.GradientTape" in names


def test_the_link_checker_finds_broken_links_and_anchors(tmp_path):
    (tmp_path / "sub").mkdir()
    (tmp_path / "index.html").write_text(
        '<a href="sub/page.html#here">ok</a> <a href="https://example.org/">outside</a>'
        '<img src="_static/pic.svg"> <a href="lite/lab/index.html?path=a.ipynb">lite</a>')
    (tmp_path / "sub" / "page.html").write_text(
        '<h1 id="here">x</h1><a href="../index.html">up</a> <a href="#there">no</a>'
        '<a href="missing.html">gone</a>')
    broken = docs_build.check_links(tmp_path, lite=False)
    assert sorted(broken) == ["index.html: _static/pic.svg",
                              "sub/page.html: #there (no such anchor)",
                              "sub/page.html: missing.html"]
    assert "index.html: lite/lab/index.html?path=a.ipynb" in docs_build.check_links(tmp_path)


def test_repository_links_become_site_links():
    text = "see [the README](../README.md#layout) and [the API](docs/api.md)"
    assert docs_build.fix_links(text, None) == "see the README and [the API](api.md)"
    assert docs_build.fix_links("[5](../notebooks/05_x.ipynb) [t](../tools/colab_cells.py)",
                                None) == "[5](tutorials/05_x.ipynb) t"
    assert docs_build.fix_links(text, "me/nbtape").startswith(
        "see [the README](https://github.com/me/nbtape/blob/main/README.md#layout)")


def test_launch_buttons_open_the_tutorial_in_the_lite_site_binder_and_colab():
    cell = docs_build.launch_cell("03_x.ipynb", "me/nbtape")["source"]
    assert 'href="../lite/lab/index.html?path=03_x.ipynb"' in cell
    assert "https://mybinder.org/v2/gh/me/nbtape/main?labpath=notebooks/03_x.ipynb" in cell
    assert "https://colab.research.google.com/github/me/nbtape/blob/main/notebooks/03_x.ipynb" \
        in cell
    assert "--repo OWNER/REPO" in docs_build.launch_cell("03_x.ipynb", None)["source"]


def lint(path):
    return subprocess.run([sys.executable, "-m", "check_jsonschema", "--builtin-schema",
                           "vendor.github-workflows", str(path)],
                          capture_output=True, text=True)


def test_the_release_workflow_is_valid_and_publishes_a_tested_wheel(tmp_path):
    result = lint(RELEASE)
    assert result.returncode == 0, result.stdout + result.stderr
    text = RELEASE.read_text()
    for needed in ("tags:", "python -m build", "pypa/gh-action-pypi-publish",
                   "id-token: write", "pytest"):
        assert needed in text, needed
    assert "password:" not in text            # trusted publishing: no token in the repository
    broken = tmp_path / "broken.yml"           # the lint must be able to fail
    broken.write_text(text.replace("runs-on:", "runs_on:", 1))
    assert lint(broken).returncode != 0


def test_the_pages_workflow_publishes_the_docs_with_the_lite_site_beside_them():
    text = (REPO / ".github" / "workflows" / "pages.yml").read_text()
    lite = text.index("python lite/build.py --output _lite")
    docs = text.index("python docs/build.py --output _site --lite-site _lite")
    assert lite < docs and "path: _site" in text
    assert "python3 docs/build.py" in (REPO / "README.md").read_text()


def test_the_inventory_modules_examples_run():
    # docs/ is not among pytest's doctest paths
    import doctest
    result = doctest.testmod(apipages)
    assert result.attempted >= 3 and result.failed == 0
