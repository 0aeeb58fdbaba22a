"""The page for teachers (docs/teaching.md) covers every tutorial and the words they use.

Every notebook in ``notebooks/`` has a row in the time table with its minutes, the stated
total is the sum of the rows, the glossary defines the terms the tutorials lean on, the
ways to run the unit are all there, and the one-page summary sheet exists, fits a page and
its code runs.  A new tutorial fails here until it has its row.
"""
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
TEACHING = ROOT / "docs" / "teaching.md"
SUMMARY = ROOT / "docs" / "summary.md"
TUTORIALS = sorted((ROOT / "notebooks").glob("[0-9]*.ipynb"))
ROW = re.compile(r"^\|\s*\[[^\]]+\]\(\.\./notebooks/([^)]+\.ipynb)\)\s*\|\s*(\d+)\s*\|", re.M)
GLOSSARY_TERMS = ["adjoint", "tangent", "seed", "VJP", "JVP", "tape", "watch"]


def _section(text, heading):
    m = re.search(rf"^## {re.escape(heading)}\n(.*?)(?=^## |\Z)", text, re.M | re.S)
    assert m, f"docs/teaching.md has no section '## {heading}'"
    return m.group(1)


def minutes(text):
    """``{notebook file: minutes}`` from the time table's rows."""
    return {name: int(m) for name, m in ROW.findall(_section(text, "Time per notebook"))}


def test_every_notebook_has_a_time_estimate():
    times = minutes(TEACHING.read_text(encoding="utf-8"))
    missing = [p.name for p in TUTORIALS if p.name not in times]
    assert not missing, f"docs/teaching.md has no time for {missing}: add a row"
    assert set(times) <= {p.name for p in TUTORIALS}, "a row names a notebook that is gone"
    assert all(10 <= t <= 90 for t in times.values()), times
    assert list(times) == [p.name for p in TUTORIALS], "rows in the path's order"


def test_the_stated_total_is_the_sum_of_the_rows():
    text = TEACHING.read_text(encoding="utf-8")
    total = re.search(r"Total: (\d+) minutes, about (\d+) student-hours", text)
    assert total, "the time table states its total"
    assert int(total.group(1)) == sum(minutes(text).values())
    assert abs(int(total.group(2)) * 60 - int(total.group(1))) <= 30


@pytest.mark.parametrize("term", GLOSSARY_TERMS)
def test_the_glossary_defines(term):
    glossary = _section(TEACHING.read_text(encoding="utf-8"), "Glossary")
    entry = re.search(rf"^- \*\*([^*]*\b{re.escape(term)}\b[^*]*):\*\* (.+)$", glossary, re.M)
    assert entry and len(entry.group(2).split()) >= 6, f"no glossary entry for {term!r}"


def test_the_page_says_which_way_to_run_the_unit_for_which_class():
    ways = _section(TEACHING.read_text(encoding="utf-8"), "Which way to run the unit")
    for way in ("JupyterLite", "Colab", "Binder", "JupyterHub"):
        assert re.search(rf"^\| \*\*[^*]*{way}[^*]*\*\*.*\|.*\|.*\|$", ways, re.M), way


def test_the_prerequisites_and_the_learning_goals_are_there():
    text = TEACHING.read_text(encoding="utf-8")
    prerequisites = _section(text, "Prerequisites")
    for subject in ("Python", "numpy", "Calculus"):
        assert f"**{subject}" in prerequisites
    goals = _section(text, "What students should be able to answer afterwards")
    assert re.search(r"^2\. Where is AD used\?.*(physics|finance).*", goals, re.M | re.S)


def test_the_summary_sheet_fits_a_page_and_its_code_runs():
    text = SUMMARY.read_text(encoding="utf-8")
    assert len(text.splitlines()) <= 70 and len(text) <= 6000    # one printed page
    for term in ("adjoint", "tangent", "seed", "VJP", "JVP", "tape", "watch"):
        assert term in text
    code = re.search(r"```python\n(.*?)```", text, re.S).group(1)
    namespace = {}
    exec(compile(code, "docs/summary.md", "exec"), namespace)
    assert [float(v) for v in namespace["dw"].numpy()] == [3.0, -24.0]


def test_the_readme_and_the_page_link_each_other():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "(docs/teaching.md)" in readme and "(docs/summary.md)" in readme
    assert "(summary.md)" in TEACHING.read_text(encoding="utf-8")
