"""Finding a layout program and drawing with it (nbtape.notebook.render)."""
import os
import stat
import struct
import warnings
import xml.etree.ElementTree as ET

import pytest

import nbtape as nt
from nbtape.notebook import render as R

PURE = R._find_engine("graphviz-pure", os.environ.get("PATH", ""), R._script_dirs())
needs_pure = pytest.mark.skipif(PURE is None, reason="graphviz-pure is not installed")
posix_only = pytest.mark.skipif(os.name != "posix", reason="fake engines are shell scripts")


def _script(folder, name, body):
    path = folder / name
    path.write_text("#!/bin/sh\n" + body + "\n")
    path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return str(path)


@pytest.fixture
def only_pure(monkeypatch):
    """Draw exactly as a fresh `pip install nbtape` does on a machine without Graphviz."""
    monkeypatch.setenv("NBTAPE_GRAPHVIZ", "graphviz-pure")


@pytest.fixture
def no_engine(monkeypatch):
    monkeypatch.setenv("NBTAPE_GRAPHVIZ", "none")


def _small_graph():
    x = nt.Variable(2.0, name="x")
    with nt.GradientTape() as tape:
        y = x * x + 1.0
    tape.gradient(y, x)
    return tape.graph()


# finding the engine ---------------------------------------------------------------------
@needs_pure
def test_the_installed_package_brings_an_engine(only_pure):
    engine = R.find_engine()
    assert engine.kind == "graphviz-pure"
    assert os.path.basename(engine.path).startswith("graphviz-pure")


@needs_pure
@posix_only
def test_a_working_system_dot_on_path_comes_first(tmp_path):
    _script(tmp_path, "dot", f'exec "{PURE.path}" "$@"')
    engine = R._find_engine("", str(tmp_path), R._script_dirs())
    assert engine == R.Engine("dot", str(tmp_path / "dot"))


@needs_pure
@posix_only
def test_a_broken_dot_is_skipped_for_graphviz_pure(tmp_path):
    _script(tmp_path, "dot", 'echo "Format: svg not recognized" >&2; exit 1')
    engine = R._find_engine("", str(tmp_path), R._script_dirs())
    assert engine.kind == "graphviz-pure"


@needs_pure
def test_graphviz_pure_is_found_outside_path_where_pip_put_it():
    # a notebook kernel from an unactivated virtualenv has the scripts folder off PATH
    folder = os.path.dirname(PURE.path)
    assert R._find_engine("", "", (folder,)).kind == "graphviz-pure"


def test_no_engine_anywhere_is_none():
    assert R._find_engine("", "", ()) is None
    assert R._find_engine("none", os.environ.get("PATH", ""), R._script_dirs()) is None


@needs_pure
@posix_only
def test_nbtape_graphviz_can_name_a_program(tmp_path):
    exe = _script(tmp_path, "my-dot", f'exec "{PURE.path}" "$@"')
    assert R._find_engine(exe, "", ()) == R.Engine("dot", exe)
    assert R._find_engine(str(tmp_path / "missing"), "", ()) is None


# drawing -------------------------------------------------------------------------------
@needs_pure
def test_svg_without_system_graphviz_is_valid_xml(only_pure):
    svg = nt.render(_small_graph(), format="svg")
    root = ET.fromstring(svg)
    assert root.tag.endswith("svg")
    titles = {el.text for el in root.iter() if el.tag.endswith("title")}
    assert {"leaf0", "op0", "op1"} <= titles


@needs_pure
def test_png_without_system_graphviz(only_pure):
    assert nt.render(_small_graph(), format="png")[:8] == b"\x89PNG\r\n\x1a\n"


def test_unknown_format_is_a_clear_error():
    with pytest.raises(ValueError, match="'svg', 'png'"):
        R.layout("digraph { a }", format="pdf")


def test_render_needs_a_graph():
    with pytest.raises(TypeError, match="DOT source"):
        nt.render(42)


def test_no_engine_says_how_to_get_pictures(no_engine):
    with pytest.raises(R.RenderError, match="pip install graphviz-pure"):
        nt.render("digraph { a }")


@posix_only
def test_a_failing_engine_reports_its_message(tmp_path):
    exe = _script(tmp_path, "dot", 'cat >/dev/null; echo "syntax error in line 1" >&2; exit 1')
    with pytest.raises(R.RenderError, match="syntax error in line 1"):
        R.layout("digraph { a }", engine=R.Engine("dot", exe))


@posix_only
def test_png_failure_on_system_dot_points_at_graphviz_pure(tmp_path):
    exe = _script(tmp_path, "dot", 'cat >/dev/null; echo \'Format: "png" not recognized\' >&2; exit 1')
    with pytest.raises(R.RenderError, match="graphviz-pure"):
        R.layout("digraph { a }", format="png", engine=R.Engine("dot", exe))


@posix_only
def test_layout_stops_at_the_timeout(tmp_path):
    slow = R.Engine("dot", _script(tmp_path, "dot", "sleep 30"))
    with pytest.raises(R.LayoutTimeout, match="longer than 0.3 s"):
        R.layout("digraph { a }", timeout=0.3, engine=slow)


@needs_pure
@posix_only
def test_a_timeout_falls_back_to_the_collapsed_picture(tmp_path, monkeypatch):
    # The engine is slow only for big inputs, as a real layout is.
    exe = _script(tmp_path, "dot",
                  f'f=$(mktemp); cat > "$f"; if [ $(wc -c < "$f") -gt 200 ]; then sleep 30; fi; '
                  f'exec "{PURE.path}" "$@" < "$f"')
    monkeypatch.setenv("NBTAPE_GRAPHVIZ", exe)

    class Big:
        source = "digraph { " + " ".join(f"n{i} -> n{i + 1};" for i in range(40)) + " }"

        def nbtape_fallback(self):
            return "digraph { small }"
    with pytest.warns(UserWarning, match="collapsed picture"):
        data, drawn = R.draw(Big(), "svg", timeout=1.0)
    assert drawn == "digraph { small }"
    assert b"<title>small</title>" in data


# what a notebook shows -------------------------------------------------------------------
@needs_pure
def test_graph_displays_as_svg_and_png_of_the_same_picture(only_pure):
    g = _small_graph()
    bundle = g._repr_mimebundle_()
    assert sorted(bundle) == ["image/png", "image/svg+xml"]
    assert bundle["image/svg+xml"].lstrip().startswith("<?xml")
    assert bundle["image/svg+xml"].encode() == nt.render(g, format="svg")
    assert bundle["image/png"] == nt.render(g, format="png")


@needs_pure
def test_png_is_drawn_at_the_size_the_svg_shows(only_pure):
    # 96 dpi: one SVG point is 96/72 CSS pixels, so both show at the same size
    # (and the PNG stays small enough to store beside the SVG in a notebook).
    g = _small_graph()
    root = ET.fromstring(nt.render(g, format="svg"))
    pt_w, pt_h = (float(root.get(k).rstrip("pt")) for k in ("width", "height"))
    png = nt.render(g, format="png")
    px_w, px_h = struct.unpack(">II", png[16:24])
    assert abs(px_w - pt_w * 96 / 72) <= 2 and abs(px_h - pt_h * 96 / 72) <= 2


@needs_pure
def test_svg_and_png_come_from_one_layout_run(only_pure, monkeypatch):
    runs = []
    real = R.subprocess.run
    monkeypatch.setattr(R.subprocess, "run", lambda cmd, **kw: runs.append(cmd) or real(cmd, **kw))
    R.draws_png()                              # the engine's PNG check is cached
    runs.clear()
    bundle = _small_graph()._repr_mimebundle_()
    assert len(runs) == 1 and runs[0][-2:] == ["-Tsvg", "-Tpng"]
    assert bundle["image/png"].startswith(R.PNG_SIGNATURE)
    assert bundle["image/svg+xml"].rstrip().endswith("</svg>")


@needs_pure
@pytest.mark.parametrize("include, exclude, expected", [
    (["image/png"], None, ["image/png"]),
    (["image/svg+xml"], None, ["image/svg+xml"]),
    (None, ["image/png"], ["image/svg+xml"]),
    (None, ["image/svg+xml"], ["image/png"]),
    (["text/plain"], None, ["image/png", "image/svg+xml"]),
    (None, ["image/png", "image/svg+xml"], []),
])
def test_include_and_exclude_narrow_the_bundle(only_pure, include, exclude, expected):
    bundle = _small_graph()._repr_mimebundle_(include=include, exclude=exclude)
    assert sorted(bundle) == expected


@needs_pure
@posix_only
def test_a_dot_without_png_support_still_shows_the_svg(tmp_path, monkeypatch):
    # a Graphviz built without cairo: SVG works, -Tpng fails
    exe = _script(tmp_path, "dot",
                  'for a in "$@"; do [ "$a" = -Tpng ] && { echo \'Format: "png" not '
                  'recognized\' >&2; exit 1; }; done; exec "' + PURE.path + '" "$@"')
    monkeypatch.setenv("NBTAPE_GRAPHVIZ", exe)
    assert not R.draws_png()
    bundle = _small_graph()._repr_mimebundle_()
    assert list(bundle) == ["image/svg+xml"]


def test_svg_and_png_split_where_the_png_starts(monkeypatch):
    # "\xc3\x89" (an accented letter) holds the PNG signature's first byte
    svg, png = b"<?xml?><svg>\xc3\x89</svg>\n", R.PNG_SIGNATURE + b"rest"
    asked = []

    class Done:
        returncode, stdout, stderr = 0, svg + png, b""
    monkeypatch.setattr(R.subprocess, "run", lambda cmd, **kw: asked.append(cmd) or Done)
    pictures = R.layout_formats("digraph {}", ("png", "svg"), engine=R.Engine("dot", "dot"))
    assert pictures == {"svg": svg, "png": png}
    assert asked[0][-2:] == ["-Tsvg", "-Tpng"]


def test_formats_are_checked():
    with pytest.raises(ValueError, match="at most once"):
        R.layout_formats("digraph { a }", ("svg", "svg"))
    with pytest.raises(ValueError, match="'svg', 'png'"):
        R.layout_formats("digraph { a }", ("svg", "gif"))


def test_without_engine_the_display_is_dot_source_and_one_line(no_engine):
    g = _small_graph()
    bundle = g._repr_mimebundle_()
    text = bundle["text/plain"]
    first, rest = text.split("\n", 1)
    assert "pip install graphviz-pure" in first
    assert rest == g.source
    assert "graphviz.graphs.Digraph at 0x" not in text
    assert "&lt;&lt;TABLE" in bundle["text/html"]    # the source, escaped into <pre>
    assert g._repr_svg_() is None


def test_with_neither_dot_nor_graphviz_pure_a_notebook_shows_the_source(monkeypatch, tmp_path):
    # Hide both for real: an empty PATH, no scripts folder, no NBTAPE_GRAPHVIZ.
    from IPython.core.interactiveshell import InteractiveShell
    monkeypatch.delenv("NBTAPE_GRAPHVIZ", raising=False)
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setattr(R, "_script_dirs", lambda: ())
    assert R.find_engine() is None and not R.draws_png()
    g = _small_graph()
    data, _ = InteractiveShell.instance().display_formatter.format(g)
    assert not any(mime.startswith("image/") for mime in data)
    first, rest = data["text/plain"].split("\n", 1)
    assert first == R.HOW_TO_GET_PICTURES and rest == g.source
    assert "Traceback" not in data["text/html"]


def test_graph_repr_has_no_address():
    text = repr(_small_graph())
    assert "0x" not in text and "nt.render" in text


@needs_pure
def test_pipe_uses_nbtapes_engine(only_pure):
    g = _small_graph()
    assert g.pipe(format="svg", encoding="utf-8").lstrip().startswith("<?xml")


@needs_pure
def test_graphviz_style_render_writes_files_without_system_dot(only_pure, tmp_path):
    g = _small_graph()
    path = g.render("tape", directory=tmp_path)
    assert path == str(tmp_path / "tape.svg")
    assert (tmp_path / "tape").read_text() == g.source
    assert ET.parse(path).getroot().tag.endswith("svg")
    png = g.render(outfile=tmp_path / "pic.png", cleanup=True)
    assert open(png, "rb").read(4) == b"\x89PNG" and not (tmp_path / "pic.gv").exists()


@needs_pure
def test_inline_svg_has_no_prolog(only_pure):
    svg = R.inline_svg("digraph { a }")
    assert svg.startswith("<svg") and "<!DOCTYPE" not in svg


def test_inline_svg_without_engine_is_none(no_engine):
    assert R.inline_svg("digraph { a }") is None


@posix_only
def test_the_engine_is_checked_once_per_path(monkeypatch, tmp_path):
    _script(tmp_path, "dot", "exit 0")
    calls = []
    monkeypatch.setattr(R, "_works", lambda exe: calls.append(exe) or True)
    R._find_engine.cache_clear()
    try:
        for _ in range(3):
            assert R._find_engine("", str(tmp_path), ()).kind == "dot"
        assert calls == [str(tmp_path / "dot")]
    finally:
        R._find_engine.cache_clear()


@needs_pure
def test_a_plain_render_warns_nothing(only_pure):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert nt.render("digraph { a -> b }").rstrip().endswith(b"</svg>")
