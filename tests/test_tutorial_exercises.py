"""The tutorials' exercises keep their secret, and the tutorials use only the public API.

An exercise is an answer cell (a neutral stub after ``# your code here``, nbgrader's
``solution`` metadata), one or more check cells that hold only a call to
``nt.exercises.check`` (nbgrader's ``grade`` metadata, with points), and one solution
in a folded ``<details>`` markdown cell: Run All never runs it, Colab and JupyterLite
fold it too, and its visible first line says nothing of the answer.  Each check says
"not yet" in the saved file, and running the solution in place of the stub turns
every check to "correct", so a check that accepts anything (or nothing) fails here.
Headings say what a section is about, not which internal example number it reproduces.
"""
import ast
import contextlib
import io
import re
from pathlib import Path

import nbformat
import pytest
from IPython.core.interactiveshell import InteractiveShell

from nbtape.notebook.exercises import exercises
from nbtape.notebook.exercises.course import given_lines, solution_code
from gradcheck import no_rules_left_behind

ROOT = Path(__file__).resolve().parent.parent
TUTORIALS = sorted((ROOT / "notebooks").glob("[0-9]*.ipynb"))
IDS = [p.stem for p in TUTORIALS]
SUMMARY = "<details>\n<summary>One solution (open it after you have tried)</summary>\n"


@pytest.fixture(autouse=True)
def _forget_the_rules_a_test_gives():
    # an answer (06b's log_cosh) registers a rule of its own: leave none behind
    with no_rules_left_behind():
        yield



_PRIVATE = [
    ("imports from nbtape.notebook", re.compile(r"^\s*(?:from|import)\s+nbtape\.notebook\b.*$", re.M)),
    ("a private attribute", re.compile(r"\b\w+\._[A-Za-z]\w*")),
]


def _read(path):
    return nbformat.read(path, as_version=4)


def _is_solution(cell):
    return "solution" in cell.metadata.get("tags", [])


def _is_check(cell):
    return cell.cell_type == "code" and "exercises.check" in cell.source


def _is_answer(cell):
    return cell.metadata.get("nbgrader", {}).get("solution") is True


def _stdout(cell):
    return "".join(o.get("text", "") for o in cell.get("outputs", [])
                   if o.get("output_type") == "stream" and o.get("name") == "stdout")


def _exercise_start(nb):
    starts = [i for i, c in enumerate(nb.cells)
              if c.cell_type == "markdown" and re.search(r"^#+ Exercise", c.source, re.M)]
    return starts[-1] if starts else None


_VERDICT = re.compile(r"""["'](?:correct|not yet)["']""")


def only_a_check_call(source):
    """True when ``source`` is one call ``nt.exercises.check("id", name, ...)`` and nothing
    else: no number, no expression, nothing that could hold an answer."""
    try:
        body = ast.parse(source).body
    except SyntaxError:
        return False
    if len(body) != 1 or not isinstance(body[0], ast.Expr):
        return False
    call = body[0].value
    return (isinstance(call, ast.Call) and ast.unparse(call.func) == "nt.exercises.check"
            and not call.keywords and len(call.args) >= 2
            and isinstance(call.args[0], ast.Constant) and isinstance(call.args[0].value, str)
            and all(isinstance(a, ast.Name) for a in call.args[1:]))


def test_every_tutorial_is_read():
    assert len(TUTORIALS) >= 9


@pytest.mark.parametrize("source, ok", [
    ('nt.exercises.check("03-gradient", answer)', True),
    ('nt.exercises.check("03c-tape-magic", answer, disc, area, r)', True),
    ('nt.exercises.check("03-gradient", 2 * (w - 1))', False),
    ('nt.exercises.check("03-gradient", answer)\nprint(2 * (w - 1))', False),
    ('print("correct" if answer == 3 else "not yet")', False),
    ('nt.exercises.check("03-gradient", answer, expected=3)', False),
])
def test_the_check_cell_rule_sees_an_answer_in_sight(source, ok):
    assert only_a_check_call(source) is ok


@pytest.mark.parametrize("path", TUTORIALS, ids=IDS)
def test_solutions_are_folded_markdown_with_a_neutral_first_line(path):
    for i, cell in enumerate(_read(path).cells):
        if _is_solution(cell):
            # a markdown cell: Run All never runs it; <details> folds it everywhere
            # (JupyterLab, JupyterLite, Colab, nbviewer), so no answer shows before a click
            assert cell.cell_type == "markdown", f"{path.name} cell {i}: a solution is code"
            assert cell.source.startswith(SUMMARY), f"{path.name} cell {i}: {cell.source[:80]!r}"
            assert cell.source.rstrip().endswith("</details>"), f"{path.name} cell {i}"
            assert solution_code(cell)


@pytest.mark.parametrize("path", TUTORIALS, ids=IDS)
def test_check_cells_hold_only_the_checker_call_and_say_not_yet(path):
    nb = _read(path)
    known = exercises()
    for i, cell in enumerate(nb.cells):
        if cell.cell_type == "code" and (_VERDICT.search(cell.source) or _is_check(cell)):
            assert only_a_check_call(cell.source), f"{path.name} cell {i}:\n{cell.source}"
            id = ast.parse(cell.source).body[0].value.args[0].value
            assert id in known, f"{path.name} cell {i}: no exercise {id!r}"
            # the saved output is the check's verdict on the untouched stub
            assert _stdout(cell).startswith("not yet: "), f"{path.name} cell {i}"


def test_every_exercise_is_checked_in_exactly_one_cell():
    seen = [ast.parse(c.source).body[0].value.args[0].value
            for p in TUTORIALS for c in _read(p).cells if _is_check(c)]
    assert sorted(seen) == sorted(exercises())


@pytest.mark.parametrize("path", TUTORIALS, ids=IDS)
def test_an_exercise_carries_nbgrader_markup(path):
    nb = _read(path)
    start = _exercise_start(nb)
    answers = [i for i, c in enumerate(nb.cells) if _is_answer(c)]
    checks = [i for i, c in enumerate(nb.cells) if _is_check(c)]
    solutions = [i for i, c in enumerate(nb.cells) if _is_solution(c)]
    if start is None and not (answers or checks or solutions):
        pytest.skip("no exercise")
    assert len(answers) == len(solutions) == 1 and checks, path.name
    assert start < answers[0] < min(checks) and max(checks) < solutions[0], path.name
    answer = nb.cells[answers[0]]
    assert re.search(r"^# your code here", answer.source, re.M | re.I), path.name
    ids = []
    for i in answers + checks:
        meta = nb.cells[i].metadata["nbgrader"]
        assert meta["schema_version"] == 3 and meta["grade_id"], f"{path.name} cell {i}"
        ids.append(meta["grade_id"])
        if i in checks:
            assert meta["grade"] is True and meta["points"] > 0 and not meta["solution"]
        else:
            assert meta["solution"] is True and meta["grade"] is False
    assert len(set(ids)) == len(ids), f"{path.name}: grade ids repeat"
    # no answer comes with the stub: Run All leaves the learner's answer cell alone
    assert "BEGIN SOLUTION" not in answer.source


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
    InteractiveShell.clear_instance()   # a shell left behind makes later doctests display


def _run(shell, cells):
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        for cell in cells:
            result = shell.run_cell(cell.source, silent=False, store_history=False)
            assert result.success, f"cell failed:\n{cell.source}\n{result.error_in_exec!r}"
    return out.getvalue()


EXERCISES = [p for p in TUTORIALS if _exercise_start(_read(p)) is not None]


@pytest.mark.parametrize("path", EXERCISES, ids=[p.stem for p in EXERCISES])
def test_the_checks_say_not_yet_unanswered_and_correct_with_the_solution(shell, path):
    """Runs the imports cell, the cells tagged ``exercise-setup`` (definitions the exercise
    builds on, such as notebook 02's ``Value``) and the exercise's cells only; then the
    folded solution in place of the answer cell's stub."""
    nb = _read(path)
    code = [c for c in nb.cells if c.cell_type == "code"]
    imports = code[1]                       # the first cell after the install cell
    start = _exercise_start(nb)
    setup = [c for c in nb.cells[:start]
             if "exercise-setup" in c.get("metadata", {}).get("tags", [])]
    cells = nb.cells[start:]
    checks = [c for c in cells if _is_check(c)]
    before = [c for c in cells if c.cell_type == "code" and c not in checks]
    _run(shell, [imports] + setup + before)
    for check in checks:
        assert _run(shell, [check]).startswith("not yet: ")
    answer = next(c for c in cells if _is_answer(c))
    solution = next(c for c in cells if _is_solution(c))
    _run(shell, [nbformat.v4.new_code_cell(given_lines(answer.source) + solution_code(solution))])
    for check in checks:
        assert _run(shell, [check]).strip() == "correct", check.source
