"""Build nbtape's documentation site, with the JupyterLite site served beside it.

    python3 -m pip install -e ".[docs]"           # with the lite and notebook extras
    python3 docs/build.py                        # site in build/docs/html, lite/ inside
    python3 -m http.server -d build/docs/html -b 127.0.0.1 8000

Options: ``--output DIR``; ``--repo OWNER/REPO`` (the repository's address, for the
tutorials' Binder and Colab buttons; without it they say how to open a notebook
there); ``--lite-site DIR`` copies an already built JupyterLite site (from
``python3 lite/build.py``) instead of building one; ``--no-lite`` leaves it out
(the JupyterLite buttons and "Try it" then need one put at ``<output>/lite``).

Sphinx (MyST pages, myst-nb for the tutorials with their stored outputs,
autodoc for the API reference) builds with warnings as errors; then every link
between the site's own pages (and into ``lite/``) is checked.  The sources are
staged in ``<output>/../src``: this folder's pages and ``conf.py``, the API pages
that ``docs/apipages.py`` writes, the tutorials (each with its launch buttons),
the changelog, a tape picture drawn by nbtape itself, and MathJax (from the npm
registry, cached in ``~/.cache/nbtape-docs``) so the site fetches nothing from
elsewhere.
"""
import argparse
import html.parser
import json
import os
import pathlib
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
import urllib.parse

DOCS = pathlib.Path(__file__).resolve().parent
ROOT = DOCS.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(DOCS))
import apipages  # noqa: E402  (docs/ is not a package)

MATHJAX = "mathjax@3.2.2"
OWN_FILES = ("build.py", "apipages.py", "__pycache__")
COLAB = "https://colab.research.google.com/"
BINDER = "https://mybinder.org/"


class DocsError(RuntimeError):
    """A step of the docs build failed; the message says which and why."""


def step(message):
    print(f"[docs] {message}", flush=True)


def cache_dir():
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    path = pathlib.Path(base) / "nbtape-docs"
    path.mkdir(parents=True, exist_ok=True)
    return path


def mathjax(dest):
    """MathJax's TeX-to-HTML bundle and its fonts, from the npm registry (cached)."""
    unpacked = cache_dir() / MATHJAX.replace("@", "-")
    if not (unpacked / "package" / "es5" / "tex-chtml.js").exists():
        npm = shutil.which("npm")
        if npm is None:
            raise DocsError("npm is needed once to fetch MathJax from the npm registry "
                            "(install Node.js with npm, e.g. Debian's `nodejs npm`).")
        with tempfile.TemporaryDirectory() as tmp:
            proc = subprocess.run([npm, "pack", MATHJAX, "--silent", "--pack-destination", tmp],
                                  capture_output=True, text=True)
            if proc.returncode != 0:
                raise DocsError(f"npm pack {MATHJAX} failed: {proc.stderr[-1000:]}")
            tgz = pathlib.Path(tmp) / proc.stdout.strip().splitlines()[-1]
            with tarfile.open(tgz) as tar:
                tar.extractall(unpacked, filter="data")
    es5 = unpacked / "package" / "es5"
    dest.mkdir(parents=True, exist_ok=True)
    shutil.copy2(es5 / "tex-chtml.js", dest / "tex-chtml.js")
    shutil.copytree(es5 / "output" / "chtml" / "fonts" / "woff-v2",
                    dest / "output" / "chtml" / "fonts" / "woff-v2")
    shutil.copy2(unpacked / "package" / "LICENSE", dest / "LICENSE")


def repo_link(path, repo):
    """A link to a file of the repository that is not part of the site (or None)."""
    return f"https://github.com/{repo}/blob/main/{path}" if repo else None


def fix_links(text, repo):
    """Links written for the repository's folders, made right for the site: a tutorial
    is its page, anything else outside ``docs/`` its file in the repository (or plain
    text while the repository's address is unknown)."""
    text = text.replace("](docs/api.md)", "](api.md)")
    text = re.sub(r"\]\(\.\./notebooks/([^)/]+\.ipynb)\)", r"](tutorials/\1)", text)

    def outside(m):
        url = repo_link(m.group(2), repo)
        return f"[{m.group(1)}]({url})" if url else m.group(1)
    return re.sub(r"\[([^\]]+)\]\(\.\./([^)]+)\)", outside, text)


def launch_cell(name, repo):
    lite = f"../lite/lab/index.html?path={name}"
    if repo:
        colab = f"{COLAB}github/{repo}/blob/main/notebooks/{name}"
        binder = f"{BINDER}v2/gh/{repo}/main?labpath=notebooks/{name}"
        note = ""
    else:
        colab, binder = COLAB, BINDER
        note = (f"\n\nOn Binder or Colab, open `notebooks/{name}` from this repository's "
                "address (the site was built without it: `docs/build.py --repo OWNER/REPO`).")
    html = ('<div class="nbtape-launch">'
            f'<a class="nbtape-launch-lite" href="{lite}">Run in your browser (JupyterLite)</a>'
            f'<a class="nbtape-launch-binder" href="{binder}">Launch on Binder</a>'
            f'<a class="nbtape-launch-colab" href="{colab}">Open in Colab</a></div>')
    return {"cell_type": "markdown", "id": "nbtape-launch", "metadata": {},
            "source": html + note}


def stage_tutorials(dest, repo):
    dest.mkdir(parents=True)
    names = []
    for nb_path in sorted((ROOT / "notebooks").glob("*.ipynb")):
        nb = json.loads(nb_path.read_text())
        nb["metadata"].pop("widgets", None)     # no widget models: their static copies show
        # the Colab badge cell is the launch buttons' job here
        nb["cells"] = [c for c in nb["cells"] if c.get("id") != "open-in-colab"]
        for cell in nb["cells"]:        # the install cell is for Colab and JupyterLite
            if cell.get("id") == "install-nbtape":
                cell["metadata"].setdefault("tags", []).append("remove-cell")
        title = next(i for i, c in enumerate(nb["cells"]) if c["cell_type"] == "markdown")
        nb["cells"].insert(title + 1, launch_cell(nb_path.name, repo))
        for cell in nb["cells"]:        # Jupyter's heading anchors keep case, MyST's do not
            if cell["cell_type"] == "markdown":
                text = "".join(cell["source"])
                cell["source"] = re.sub(r"(\.ipynb#)([^)\s]+)",
                                        lambda m: m.group(1) + m.group(2).lower(), text)
        (dest / nb_path.name).write_text(json.dumps(nb, indent=1))
        names.append(nb_path.stem)
    (dest / "index.md").write_text(
        "# Tutorials\n\nA learning path of short notebooks, each with one goal. Each page "
        "shows the notebook as it ran (its stored outputs); its buttons run it in your "
        "browser (JupyterLite), on Binder or on Colab.\n\n"
        "```{toctree}\n:maxdepth: 1\n\n" + "\n".join(names) + "\n```\n")
    return names


def landing_pieces(dest):
    """A tape picture drawn by nbtape, and the inspector's static copy from a tutorial."""
    import numpy as np
    import nbtape as nt
    dest.mkdir(parents=True, exist_ok=True)
    x = nt.Variable(3.0, name="x")
    with nt.GradientTape() as tape:
        y = np.sin(x) * x ** 2
    tape.gradient(y, x)
    (dest / "tape.svg").write_text(tape.graph()._repr_svg_())
    for nb_path in sorted((ROOT / "notebooks").glob("*.ipynb")):
        for cell in json.loads(nb_path.read_text())["cells"]:
            for out in cell.get("outputs", ()):
                snapshot = "".join(out.get("data", {}).get("text/html", ""))
                if "nbtape-inspect" in snapshot and "nbtape-snapshot" in snapshot:
                    (dest / "inspector.html").write_text(
                        snapshot.replace("<details class='nbtape-snapshot'>",
                                         "<details class='nbtape-snapshot' open>"))
                    return
    raise DocsError("no tutorial has a stored static copy of nt.inspect for the landing page")


def stage(src, repo):
    if src.exists():
        shutil.rmtree(src)
    shutil.copytree(DOCS, src, ignore=shutil.ignore_patterns(*OWN_FILES))
    for md in src.glob("*.md"):
        md.write_text(fix_links(md.read_text(), repo))
    (src / "CHANGELOG.md").write_text(fix_links((ROOT / "CHANGELOG.md").read_text(), repo))
    apipages.write_pages(src / "reference")
    stage_tutorials(src / "tutorials", repo)
    shutil.copy2(ROOT / "notebooks" / "open_in_colab.svg", src / "tutorials")
    landing_pieces(src / "_generated")
    mathjax(src / "_static" / "mathjax")


def sphinx(src, out, repo):
    env = {**os.environ, "NBTAPE_DOCS_REPO": repo or "",
           "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    proc = subprocess.run([sys.executable, "-m", "sphinx", "-W", "--keep-going", "-q",
                           "-b", "html", "-d", str(src.parent / "doctrees"), str(src), str(out)],
                          capture_output=True, text=True, env=env)
    if proc.returncode != 0:
        raise DocsError(f"Sphinx failed (warnings are errors):\n{proc.stderr[-6000:]}")


class _Links(html.parser.HTMLParser):
    def __init__(self):
        super().__init__()
        self.links, self.ids = [], set()

    def handle_starttag(self, tag, attrs):
        for name, value in attrs:
            if name == "id" and value:
                self.ids.add(value)
            if name in ("href", "src") and value and tag not in ("iframe",):
                self.links.append(value)


def check_links(site, lite=True):
    """Every link between the site's own files (and into lite/) leads somewhere: the broken."""
    site = pathlib.Path(site)
    pages, broken = {}, []

    def parsed(path):
        if path not in pages:
            p = _Links()
            p.feed(path.read_text(errors="replace"))
            pages[path] = p
        return pages[path]
    for page in sorted(site.rglob("*.html")):
        if (site / "lite") in page.parents:
            continue                          # JupyterLite's own app
        for link in parsed(page).links:
            parts = urllib.parse.urlsplit(link)
            if parts.scheme or link.startswith("//"):
                continue
            target = (page.parent / urllib.parse.unquote(parts.path)).resolve() \
                if parts.path else page
            if not lite and (site / "lite").resolve() in [target, *target.parents]:
                continue
            if target.is_dir():
                target = target / "index.html"
            if not target.exists():
                broken.append(f"{page.relative_to(site)}: {link}")
            elif parts.fragment and target.suffix == ".html" \
                    and parts.fragment not in parsed(target).ids:
                broken.append(f"{page.relative_to(site)}: {link} (no such anchor)")
    return broken


def build(output, repo=None, lite="build", lite_site=None):
    """Build the site into ``output`` (replaced); a summary dict."""
    started = time.monotonic()
    output = pathlib.Path(output).resolve()
    src = output.parent / "src"
    step(f"staging the sources in {src}")
    stage(src, repo)
    if output.exists():
        shutil.rmtree(output)
    step("sphinx (warnings are errors)")
    sphinx(src, output, repo)
    sphinx_seconds = time.monotonic() - started
    if lite == "build":
        step("the JupyterLite site: python3 lite/build.py")
        proc = subprocess.run([sys.executable, str(ROOT / "lite" / "build.py"),
                               "--output", str(output / "lite")])
        if proc.returncode != 0:
            raise DocsError("lite/build.py failed (its output is above)")
    elif lite == "copy":
        shutil.copytree(lite_site, output / "lite")
    broken = check_links(output, lite=lite != "none")
    if broken:
        raise DocsError(f"{len(broken)} broken internal links:\n  " + "\n  ".join(broken[:40]))
    size = sum(p.stat().st_size for p in output.rglob("*") if p.is_file())
    summary = {"output": str(output), "seconds": time.monotonic() - started,
               "sphinx_seconds": sphinx_seconds, "bytes": size}
    step(f"site in {output}: {size / 1e6:.1f} MB, built in {summary['seconds']:.0f} s "
         f"(Sphinx {sphinx_seconds:.0f} s); internal links all lead somewhere")
    return summary


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--output", default=str(ROOT / "build" / "docs" / "html"))
    parser.add_argument("--repo", default=os.environ.get("NBTAPE_DOCS_REPO") or None,
                        help="OWNER/REPO: the repository's address, for Binder and Colab")
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--lite-site", help="an already built JupyterLite site to copy in")
    group.add_argument("--no-lite", action="store_true", help="leave the JupyterLite site out")
    args = parser.parse_args(argv)
    lite = "none" if args.no_lite else "copy" if args.lite_site else "build"
    try:
        build(args.output, repo=args.repo, lite=lite, lite_site=args.lite_site)
    except DocsError as e:
        print(f"[docs] build failed: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
