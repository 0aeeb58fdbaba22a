"""The tutorials' exercises are fair, and the tutorials use only the public API.

A solution cell (tagged ``solution``) is collapsed and stores no output, so the saved
file does not give the answer away; a check cell before it prints "correct" or
"not yet" and says "not yet" in the saved file. Running the exercise with the
solution in place of the learner's cell must turn the check to "correct", so a check
that accepts anything (or nothing) fails here. Headings say what a section is about,
not which internal example number it reproduces.
"""
import contextlib
import io
import re
from pathlib import Path

import nbformat
import pytest
from IPython.core.interactiveshell import InteractiveShell

ROOT = Path(__file__).resolve().parent.parent
TUTORIALS = sorted((ROOT / "notebooks").glob("[0-9]*.ipynb"))
IDS = [p.stem for p in TUTORIALS]


_PRIVATE = [
    ("imports from nbtape.notebook", re.compile(r"^\s*(?:from|import)\s+nbtape\.notebook\b.*$", re.M)),
    ("a private attribute", re.compile(r"\b\w+\._[A-Za-z]\w*")),
]


def _read(path):
    return nbformat.read(path, as_version=4)


def _is_solution(cell):
    return cell.cell_type == "code" and "solution" in cell.metadata.get("tags", [])


def _is_check(cell):
    return (cell.cell_type == "code" and not _is_solution(cell)
            and '"correct"' in cell.source and '"not yet"' in cell.source)


def _stdout(cell):
    return "".join(o.get("text", "") for o in cell.get("outputs", [])
                   if o.get("output_type") == "stream" and o.get("name") == "stdout")


def _exercise_start(nb):
    starts = [i for i, c in enumerate(nb.cells)
              if c.cell_type == "markdown" and re.search(r"^#+ Exercise", c.source, re.M)]
    return starts[-1] if starts else None


def test_every_tutorial_is_read():
    assert len(TUTORIALS) >= 9


@pytest.mark.parametrize("path", TUTORIALS, ids=IDS)
def test_solution_cells_are_collapsed_and_store_no_output(path):
    for i, cell in enumerate(_read(path).cells):
        if _is_solution(cell):
            assert not cell.get("outputs"), f"{path.name} cell {i}: a solution stores output"
            assert cell.metadata.get("jupyter", {}).get("source_hidden") is True, \
                f"{path.name} cell {i}: the solution's source is not hidden"
            assert cell.metadata.get("collapsed") is True, f"{path.name} cell {i}: not collapsed"


@pytest.mark.parametrize("path", TUTORIALS, ids=IDS)
def test_an_exercise_has_a_check_before_its_solution_that_says_not_yet(path):
    nb = _read(path)
    start = _exercise_start(nb)
    solutions = [i for i, c in enumerate(nb.cells) if _is_solution(c)]
    if start is None and not solutions:
        pytest.skip("no exercise")
    assert start is not None and solutions, f"{path.name}: an exercise needs a solution cell"
    checks = [i for i, c in enumerate(nb.cells) if _is_check(c) and i > start]
    assert len(checks) == 1, f"{path.name}: one check cell printing correct / not yet"
    assert checks[0] < min(solutions), f"{path.name}: the check comes before the solution"
    # the saved output is the check's verdict on an empty answer, and nothing more
    assert _stdout(nb.cells[checks[0]]) == "not yet\n", path.name


@pytest.mark.parametrize("path", TUTORIALS, ids=IDS)
def test_headings_are_descriptive_not_example_numbers(path):
    bad = [line for c in _read(path).cells if c.cell_type == "markdown"
           for line in c.source.splitlines()
           if line.startswith("#") and re.search(r"\bExample\s+\d+", line)]
    assert not bad, f"{path.name}: {bad}"


@pytest.mark.parametrize("path", TUTORIALS, ids=IDS)
def test_tutorial_code_uses_only_the_public_api(path):
    bad = []
    for i, cell in enumerate(_read(path).cells):
        if cell.cell_type != "code":
            continue
        for kind, pattern in _PRIVATE:
            for m in pattern.finditer(cell.source):
                hit = m.group(0).strip()
                bad.append(f"cell {i}: {kind}: {hit}")
    assert not bad, f"{path.name} reaches past the public API:\n" + "\n".join(bad)


@pytest.mark.parametrize("source, caught", [
    ("from nbtape.notebook.graph import backward_steps", True),
    ("import nbtape.notebook.widgets as w", True),
    ("for op in tape._ops:\n    pass", True),
    ("print(tape.ops, nt.Variable(1.0).name)", False),
    ("_fd = 1.0\nprint(_check())", False),
])
def test_the_public_api_check_sees_private_use(source, caught):
    assert any(p.search(source) for _, p in _PRIVATE) is caught


@pytest.fixture
def shell(monkeypatch):
    monkeypatch.setenv("MPLBACKEND", "Agg")
    sh = InteractiveShell.instance()
    sh.reset()
    yield sh
    sh.reset()


def _run(shell, cells):
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        for cell in cells:
            result = shell.run_cell(cell.source, silent=False, store_history=False)
            assert result.success, f"cell failed:\n{cell.source}\n{result.error_in_exec!r}"
    return out.getvalue()


EXERCISES = [p for p in TUTORIALS if _exercise_start(_read(p)) is not None]


@pytest.mark.parametrize("path", EXERCISES, ids=[p.stem for p in EXERCISES])
def test_the_check_says_not_yet_unanswered_and_correct_with_the_solution(shell, path):
    """Runs the imports cell, the cells tagged ``exercise-setup`` (definitions the exercise
    builds on, such as notebook 02's ``Value``) and the exercise's cells only."""
    nb = _read(path)
    code = [c for c in nb.cells if c.cell_type == "code"]
    imports = code[1]                       # the first cell after the install cell
    start = _exercise_start(nb)
    setup = [c for c in nb.cells[:start]
             if "exercise-setup" in c.get("metadata", {}).get("tags", [])]
    cells = nb.cells[start:]
    check = next(c for c in cells if _is_check(c))
    before = [c for c in cells if c.cell_type == "code" and not _is_solution(c) and c is not check]
    solutions = [c for c in cells if _is_solution(c)]
    _run(shell, [imports] + setup + before)
    assert _run(shell, [check]).strip() == "not yet"
    _run(shell, solutions)
    assert _run(shell, [check]).strip() == "correct"
