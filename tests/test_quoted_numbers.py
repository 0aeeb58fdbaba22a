"""The tutorials' text agrees with the stored outputs it quotes.

A number (or phrase) that a markdown cell quotes from an output is marked where it
stands with an HTML comment, which no renderer shows:

    ... holds 140 ops<!-- quote: 140 ops --> ...
    ... some $10^{13}$<!-- quote: $10^{13}$ | 10^-13 --> times slower ...

``quote: TEXT`` says TEXT is in this cell's visible text and in the stored output of
a code cell before it or of the code cell right after it (text, HTML, or the words of
an SVG picture); ``quote: TEXT | OUTPUT`` when the output writes it differently.
Whitespace and line breaks do not count.  Besides the marked quotes, every op count
written in markdown ("140 ops", "2 recorded ops") must be one that an output of the
same notebook shows.  nbval keeps the outputs right; this keeps the prose that
quotes them right (the first reading found "only the 20 losses' operations" over an
output of 140 ops).  It reads the files only: it runs no kernel.
"""
import html
import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
MARK = re.compile(r"<!--\s*quote:\s*(.*?)\s*-->", re.S)
COMMENT = re.compile(r"<!--.*?-->", re.S)
OP_COUNT = re.compile(r"(?<![\w.$])(\d[\d,]*) (?:recorded )?ops?\b")
_TAG = re.compile(r"<[^>]+>")


def _squash(text):
    return " ".join(text.split())


def _source(cell):
    src = cell.get("source", "")
    return "".join(src) if isinstance(src, list) else src


def output_text(cell):
    """Everything a code cell's stored outputs say in words (pictures by their text)."""
    parts = []
    for out in cell.get("outputs", []):
        text = out.get("text", "")
        parts.append("".join(text) if isinstance(text, list) else text)
        for kind, value in out.get("data", {}).items():
            value = "".join(value) if isinstance(value, list) else value
            if kind in ("text/plain", "text/markdown"):
                parts.append(value)
            elif kind in ("text/html", "image/svg+xml"):
                parts.append(html.unescape(_TAG.sub(" ", value)))
        if out.get("output_type") == "error":
            parts.append(" ".join(out.get("traceback", [])))
    return _squash(" ".join(parts))


def problems(nb, name="notebook"):
    """What the markdown of ``nb`` (a notebook as JSON) quotes that its outputs do not show."""
    cells = nb["cells"]
    found = []
    everything = " ".join(output_text(c) for c in cells if c["cell_type"] == "code")
    for k, cell in enumerate(cells):
        if cell["cell_type"] != "markdown":
            continue
        source = _source(cell)
        visible = _squash(COMMENT.sub("", source))
        later = next((c for c in cells[k + 1:] if c["cell_type"] == "code"), None)
        around = " ".join(output_text(c) for c in cells[:k] if c["cell_type"] == "code")
        around += " " + (output_text(later) if later is not None else "")
        for mark in MARK.findall(source):
            text, _, output = (_squash(part) for part in mark.partition("|"))
            output = output or text
            if text not in visible:
                found.append(f"{name} cell {k}: the quote {text!r} is not in the cell's text")
            if output not in around:
                found.append(f"{name} cell {k}: the text quotes {output!r}, which no output "
                             "before it (or just after it) shows")
        for count in OP_COUNT.findall(visible):
            if not re.search(rf"(?<![\d,]){re.escape(count)} (?:recorded )?ops?\b", everything):
                found.append(f"{name} cell {k}: the text says {count} ops; no output does")
    return found


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_the_text_quotes_what_the_outputs_show(path):
    nb = json.loads(path.read_text(encoding="utf-8"))
    assert not problems(nb, path.name), "\n".join(problems(nb, path.name))


def test_the_tutorials_mark_their_quotes():
    marks = [m for p in NOTEBOOKS for c in json.loads(p.read_text(encoding="utf-8"))["cells"]
             if c["cell_type"] == "markdown" for m in MARK.findall(_source(c))]
    assert len(marks) >= 8


def _nb(*cells):
    out = []
    for kind, text, printed in cells:
        cell = {"cell_type": kind, "source": text, "metadata": {}}
        if kind == "code":
            cell["outputs"] = [{"output_type": "stream", "name": "stdout", "text": printed}]
        out.append(cell)
    return {"cells": out}


def test_a_stale_quote_is_caught():
    ran = ("code", "loop()", "descent: 140 ops recorded (persistent)\n")
    good = _nb(ran, ("markdown", "It holds 140 ops<!-- quote: 140 ops -->.", None))
    assert problems(good) == []
    stale = _nb(ran, ("markdown", "It holds 60 ops<!-- quote: 60 ops -->.", None))
    assert len(problems(stale)) == 2          # the op count, and the marked quote
    unmarked = _nb(ran, ("markdown", "The tape holds only 60 ops.", None))
    assert problems(unmarked) == ["notebook cell 1: the text says 60 ops; no output does"]
    wrong_text = _nb(ran, ("markdown", "Many.<!-- quote: 140 ops -->", None))
    assert "not in the cell's text" in problems(wrong_text)[0]


def test_a_quote_may_introduce_the_next_cell_and_be_written_differently():
    svg = '<svg><text>Reverse pass, 3 of 5 steps done: next</text></svg>'
    nb = {"cells": [
        {"cell_type": "markdown", "metadata": {},
         "source": "shows 3 of\n5 steps done<!-- quote: 3 of 5 steps done -->; about\n"
                   "$10^{13}$<!-- quote: $10^{13}$ | 10^-13 -->"},
        {"cell_type": "code", "metadata": {}, "outputs": [
            {"output_type": "display_data", "data": {"image/svg+xml": svg}},
            {"output_type": "stream", "name": "stdout", "text": "about 10^-13\n"}]},
    ]}
    assert problems(nb) == []
    # an output two code cells further on is too far from the text to count
    nb["cells"].insert(1, {"cell_type": "code", "metadata": {}, "outputs": []})
    assert len(problems(nb)) == 2
