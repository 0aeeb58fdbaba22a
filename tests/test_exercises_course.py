"""The tutorials as an nbgrader course (``python3 -m nbtape.notebook.exercises.course build``).

The course's source notebooks hold each solution between ``### BEGIN SOLUTION`` and
``### END SOLUTION`` and strict checks; ``nbgrader generate_assignment`` (run over every
tutorial) gives student versions with no solution text; ``nbgrader autograde`` gives
full points to solved notebooks, none to untouched ones, and the right part to a
notebook with one wrong answer.  Everything runs in files and local kernels.
"""
import math
import os
import sys
from pathlib import Path

import nbformat
import numpy as np
import pytest

from nbtape.notebook.exercises import exercises
from nbtape.notebook.exercises.course import (build, instructor_version, main, solution_code,
                                              strict)

ROOT = Path(__file__).resolve().parent.parent
TUTORIALS = sorted((ROOT / "notebooks").glob("[0-9]*.ipynb"))


def _is_solution(cell):
    return "solution" in cell.metadata.get("tags", [])

NOTEBOOKS = ROOT / "notebooks"
GRADED = ["01_what_is_autodiff", "13_vanishing_gradients"]
SEED = 38           # the course's graded data (any seed does: tests/test_exercises.py)


def _code(nb):
    return "\n".join(c.source for c in nb.cells)


@pytest.mark.parametrize("path", TUTORIALS, ids=[p.stem for p in TUTORIALS])
def test_the_source_version_puts_the_solution_in_the_answer_cell(path):
    nb = nbformat.read(path, as_version=4)
    version = instructor_version(nb)
    solutions = [c for c in nb.cells if _is_solution(c)]
    if not solutions:
        assert version is None
        return
    assert not any(_is_solution(c) for c in version.cells)
    assert "<details>" not in _code(version)
    answers = [c for c in version.cells if c.metadata.get("nbgrader", {}).get("solution")]
    assert len(answers) == 1
    body = answers[0].source.split("### BEGIN SOLUTION\n")[1].split("\n### END SOLUTION")[0]
    assert body == solution_code(solutions[0])
    checks = [c for c in version.cells if c.metadata.get("nbgrader", {}).get("grade")]
    assert checks and all(c.source.endswith(", strict=True)") for c in checks)


def test_strict_needs_a_call():
    with pytest.raises(ValueError, match="should end with the check call"):
        strict("print(1)")


def test_the_command_builds_one_assignment_per_tutorial_with_exercises(tmp_path, capsys):
    assert main(["build", str(tmp_path), "03_", "11b", "--notebooks", str(NOTEBOOKS)]) == 0
    assert "1 assignments" in capsys.readouterr().out   # 11b has no exercise; "03_" leaves out 03b
    assert (tmp_path / "source" / "03_gradient_tape_basics" / "03_gradient_tape_basics.ipynb").is_file()
    assert "CourseDirectory" in (tmp_path / "nbgrader_config.py").read_text()


@pytest.fixture(scope="module")
def course(tmp_path_factory):
    """The course, generated for every tutorial, and graded for GRADED."""
    from nbgrader.apps import NbGraderAPI
    from traitlets.config.loader import PyFileConfigLoader

    root = tmp_path_factory.mktemp("course")
    names = build(root, NOTEBOOKS, seed=SEED)
    # the configuration the builder writes (the empty code stub, the outside verdicts)
    config = PyFileConfigLoader("nbgrader_config.py", path=str(root)).load_config()
    config.CourseDirectory.root = str(root)
    api = NbGraderAPI(config=config)
    with pytest.MonkeyPatch.context() as patch:
        # the kernels that nbgrader starts import this checkout's nbtape
        patch.setenv("PYTHONPATH", os.pathsep.join(
            p for p in (str(ROOT), os.environ.get("PYTHONPATH")) if p))
        for name in names:
            result = api.generate_assignment(name, force=True)
            assert result["success"], result.get("error")
        yield root, names, api


def _submit(root, student, assignment, nb):
    folder = root / "submitted" / student / assignment
    folder.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, folder / f"{assignment}.ipynb")


@pytest.mark.slow
def test_student_versions_hold_no_solution_text(course):
    root, names, _ = course
    assert sorted(names) == sorted(p.stem for p in TUTORIALS
                                   if any(_is_solution(c) for c in nbformat.read(p, 4).cells))
    assert len(names) == len({id.split("-")[0] for id in exercises()})
    for name in names:
        tutorial = nbformat.read(NOTEBOOKS / f"{name}.ipynb", as_version=4)
        secret = solution_code(next(c for c in tutorial.cells if _is_solution(c)))
        released = _code(nbformat.read(root / "release" / name / f"{name}.ipynb", 4))
        assert "BEGIN SOLUTION" not in released and "<details>" not in released, name
        assert "below it is one solution" not in released, name
        assert "raise NotImplementedError()" not in released, name
        # the released answer cell is the tutorial's: its stub and signature kept
        stub = [c.source for c in tutorial.cells if c.metadata.get("nbgrader", {}).get("solution")]
        given = [c.source for c in nbformat.read(root / "release" / name / f"{name}.ipynb",
                                                  4).cells
                 if c.metadata.get("nbgrader", {}).get("solution")]
        assert [g.rstrip() for g in given] == [t.rstrip() for t in stub], name
        # no line of the solution that the tutorial does not already show elsewhere
        shown = _code(nbformat.read(root / "source" / name / f"{name}.ipynb", 4)).split(
            "### BEGIN SOLUTION")[0]
        leaked = [line for line in secret.splitlines()
                  if len(line.strip()) > 12 and line in released and line not in shown]
        assert not leaked, f"{name}: {leaked}"


@pytest.mark.slow
@pytest.mark.filterwarnings("ignore::sqlalchemy.exc.SAWarning")   # nbgrader's own sessions
def test_autograde_full_none_and_partial(course):
    from nbgrader.api import Gradebook

    root, _, api = course
    cases = {}
    for name in GRADED:
        solved = nbformat.read(root / "source" / name / f"{name}.ipynb", 4)
        blank = nbformat.read(root / "release" / name / f"{name}.ipynb", 4)
        cases[(name, "solved")] = solved
        cases[(name, "blank")] = blank
    # one wrong answer: 13's second part says "sigmoid"; its first part stays right
    wrong = nbformat.read(root / "source" / GRADED[1] / f"{GRADED[1]}.ipynb", 4)
    answer = next(c for c in wrong.cells if c.metadata.get("nbgrader", {}).get("solution"))
    assert 'closer_to = "relu"' in answer.source
    answer.source = answer.source.replace('closer_to = "relu"', 'closer_to = "sigmoid"')
    cases[(GRADED[1], "wrong")] = wrong
    for (name, student), nb in cases.items():
        _submit(root, student, name, nb)
        result = api.autograde(name, student, force=True, create=True)
        assert result["success"], result.get("error")
    with Gradebook(f"sqlite:///{root / 'gradebook.db'}") as gradebook:
        score = {key: gradebook.find_submission(key[0], key[1]) for key in cases}
        got = {key: (s.score, s.max_score) for key, s in score.items()}
    assert got[(GRADED[0], "solved")] == (1.0, 1.0)
    assert got[(GRADED[0], "blank")] == (0.0, 1.0)
    assert got[(GRADED[1], "solved")] == (2.0, 2.0)
    assert got[(GRADED[1], "blank")] == (0.0, 2.0)
    assert got[(GRADED[1], "wrong")] == (1.0, 2.0)
    # the autograded copy says what was wrong, in the check's own words
    graded = nbformat.read(root / "autograded" / "wrong" / GRADED[1] / f"{GRADED[1]}.ipynb", 4)
    text = "".join(o.get("text", "") + o.get("evalue", "")
                   for c in graded.cells if c.cell_type == "code" for o in c.outputs)
    assert "13-closer-to: not yet: not that one" in text


@pytest.mark.slow
@pytest.mark.filterwarnings("ignore::sqlalchemy.exc.SAWarning")   # nbgrader's own sessions
def test_every_reference_answer_gets_every_mark(course):
    """Every source notebook (the TA's answer key), autograded with the outside judge:
    values, functions, classes (02), decorated functions (06), a rule (06b), a tape (14)."""
    from nbgrader.api import Gradebook

    root, names, api = course
    for name in names:
        nb = nbformat.read(root / "source" / name / f"{name}.ipynb", 4)
        _submit(root, "reference", name, nb)
        result = api.autograde(name, "reference", force=True, create=True)
        assert result["success"], result.get("error")
    with Gradebook(f"sqlite:///{root / 'gradebook.db'}") as gradebook:
        got = {name: (gradebook.find_submission(name, "reference").score,
                      gradebook.find_submission(name, "reference").max_score)
               for name in names}
    assert all(score == top for score, top in got.values()), got
    assert sum(top for _, top in got.values()) == sum(e.points for e in exercises().values())


def _memorised_fit():
    """11's self-check data as the installed nbtape has it, and its least-squares fit."""
    x = np.linspace(-2.0, 2.0, 25)
    y = 0.8 * x ** 2 - 1.2 * x + 0.5 + np.random.default_rng(11).normal(0.0, 0.3, x.shape)
    return tuple(float(v) for v in np.polyfit(x, y, 2))


def _segment(length, memory):
    peaks = {s: math.ceil(length / s) + s for s in range(1, length + 1)}
    best = min(peaks, key=lambda s: (peaks[s], s))
    return best if peaks[best] <= memory else None


SHIPPED_CASES_10 = [(400, 40), (400, 45), (100, 25), (1000, 63), (1000, 70), (50, 14),
                    (400, 39), (7, 6)]
# answers that remember what the self-checks in a student's install accept
REMEMBERED = {
    "11_fitting_a_line": ("def fit_quadratic(x, y):\n"
                          f"    return {_memorised_fit()!r}\n", "11-quadratic-fit"),
    "10_the_memory_cost_of_reverse_mode": (
        "def segment(length, memory):\n"
        f"    return {dict((c, _segment(*c)) for c in SHIPPED_CASES_10)!r}"
        ".get((length, memory))\n"
        "calls = 800\n", "10-checkpoint-segment"),
}


@pytest.mark.slow
@pytest.mark.filterwarnings("ignore::sqlalchemy.exc.SAWarning")   # nbgrader's own sessions
def test_answers_remembered_from_the_shipped_self_checks_get_nothing(course):
    """The install's self-checks accept these (formative: their data ships), the course's
    own graded data does not; the reference answers pass on it (the test above)."""
    from nbgrader.api import Gradebook

    from nbtape.notebook.exercises import feedback
    from nbtape.notebook.exercises.course import given_lines
    from nbtape.notebook.exercises.variants import read

    root, _, api = course
    graded = read(root / "nbtape_graded.json")
    for name, (lines, id) in REMEMBERED.items():
        namespace = {}
        exec(lines, namespace)
        answer = namespace["fit_quadratic" if name.startswith("11") else "segment"]
        assert feedback(id, answer), id                 # the shipped data: "correct"
        assert not feedback(id, answer, **graded[id]), id   # the course's: not
        nb = nbformat.read(root / "release" / name / f"{name}.ipynb", 4)
        cell = next(c for c in nb.cells if c.metadata.get("nbgrader", {}).get("solution"))
        cell.source = given_lines(cell.source) + lines
        _submit(root, "remembers", name, nb)
        result = api.autograde(name, "remembers", force=True, create=True)
        assert result["success"], result.get("error")
    with Gradebook(f"sqlite:///{root / 'gradebook.db'}") as gradebook:
        got = {name: gradebook.find_submission(name, "remembers").score for name in REMEMBERED}
    # 10's second check (the predicted count, 800) is right: 1 of 2
    assert got == {"11_fitting_a_line": 0, "10_the_memory_cost_of_reverse_mode": 1}, got


def test_the_course_keeps_its_graded_data_out_of_what_it_releases(tmp_path):
    build(tmp_path, NOTEBOOKS, ["07_", "11_"], seed=5)
    kept = (tmp_path / "nbtape_graded.json").read_text()
    assert '"seed": 5' in kept
    build(tmp_path, NOTEBOOKS, ["07_"], seed=6)         # a rebuild keeps the course's data
    assert (tmp_path / "nbtape_graded.json").read_text() == kept
    config = (tmp_path / "nbgrader_config.py").read_text()
    assert "graded=" in config and "nbtape_graded.json" in config
    assert not list((tmp_path / "source").rglob("*.json"))


def test_the_course_module_runs_as_a_command(tmp_path):
    import subprocess
    out = subprocess.run([sys.executable, "-m", "nbtape.notebook.exercises.course", "build",
                          str(tmp_path), "01", "--notebooks", str(NOTEBOOKS)],
                         capture_output=True, text=True, cwd=ROOT,
                         env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert out.returncode == 0, out.stderr
    assert "01_what_is_autodiff" in out.stdout
    assert (tmp_path / "source" / "01_what_is_autodiff" / "01_what_is_autodiff.ipynb").is_file()


def test_without_tutorials_the_command_says_where_they_are(tmp_path, capsys):
    with pytest.raises(SystemExit):
        main(["build", str(tmp_path / "course"), "--notebooks", str(tmp_path / "none")])
    said = capsys.readouterr().err
    assert "no tutorials at" in said and "--notebooks DIR" in said
