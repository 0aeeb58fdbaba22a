"""The tutorials as the wheel ships them: no solutions, and a course built from them.

``learner_copy`` takes every folded solution out of a tutorial; setup.py's build step
puts that copy of whatever ``notebooks/`` holds into the wheel.  The fast tests check
the copy of this checkout's tutorials; the slow ones build the wheel (once a session,
``built_wheel``), read it, and install it in a fresh venv where, with no checkout, the
tutorials are copied out and a course is built and graded by nbgrader.
"""
import json
import os
import sys
import zipfile
from pathlib import Path

import nbformat
import pytest

from nbtape.notebook.exercises.course import copy_tutorials, solution_code
from nbtape.notebook.exercises.learner_copy import (FOLDED, is_solution, shipped,
                                                    without_solutions,
                                                    write_learner_copies)

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = ROOT / "notebooks"
TUTORIALS = sorted(NOTEBOOKS.glob("[0-9]*.ipynb"))
WHEEL_TUTORIALS = "nbtape/notebook/tutorials/"


def _secrets():
    """The lines of the tutorials' solutions that no tutorial shows elsewhere (a line
    shown outside the solutions, an API idiom, is no secret)."""
    shown = "\n".join(c.source for path in TUTORIALS for c in nbformat.read(path, 4).cells
                      if not is_solution(c))
    secrets = []
    for path in TUTORIALS:
        for cell in nbformat.read(path, 4).cells:
            if is_solution(cell):
                secrets += [line.strip() for line in solution_code(cell).splitlines()
                            if len(line.strip()) > 12 and line.strip() not in shown]
    return secrets


def _cells(text):
    return [(c["cell_type"], "".join(c["source"]) if isinstance(c["source"], list)
             else c["source"]) for c in json.loads(text)["cells"]]


def test_a_learner_copy_has_every_cell_but_the_solutions(tmp_path):
    names = write_learner_copies(NOTEBOOKS, tmp_path)
    assert {p.name for p in TUTORIALS} | {"contents.ipynb"} <= set(names)
    secrets = _secrets()
    assert len(secrets) > 20
    for path in TUTORIALS:
        original = _cells(path.read_text())
        copied = (tmp_path / path.name).read_text()
        nb = json.loads(path.read_text())
        kept = [(kind, FOLDED.sub("", text) if kind == "markdown" else text)
                for (kind, text), cell in zip(original, nb["cells"]) if not is_solution(cell)]
        assert _cells(copied) == kept, path.name
        assert "<details>" not in copied and "below it is one solution" not in copied
        assert not [s for s in secrets if s in copied], path.name
        assert nbformat.reads(copied, as_version=4)        # still a valid notebook
    # copying a copy changes nothing
    again = tmp_path / "again"
    write_learner_copies(tmp_path, again)
    assert (again / TUTORIALS[2].name).read_text() == (tmp_path / TUTORIALS[2].name).read_text()


def test_without_solutions_leaves_the_notebook_it_reads_as_it_was():
    nb = json.loads(TUTORIALS[0].read_text())
    before = json.dumps(nb)
    without_solutions(nb)
    assert json.dumps(nb) == before


def test_copying_the_tutorials_out_never_overwrites_work(tmp_path, capsys):
    from nbtape.notebook.exercises.course import main
    assert main(["tutorials", str(tmp_path / "mine")]) == 0
    assert "contents.ipynb" in capsys.readouterr().out
    assert (tmp_path / "mine" / "03_gradient_tape_basics.ipynb").is_file()
    with pytest.raises(FileExistsError, match="already holds"):
        copy_tutorials(tmp_path / "mine")


def test_a_checkout_has_no_shipped_copy():
    # the copy is made by the build, from notebooks/ as it is then; never committed
    assert not shipped().exists()


# --- the built wheel ---------------------------------------------------------------------
@pytest.mark.slow
def test_the_wheel_ships_the_tutorials_and_no_solution(built_wheel):
    """What students install has no answer key: the tutorials are there, and no line of a
    tutorial's solution that the tutorials do not show elsewhere is in any file of it."""
    with zipfile.ZipFile(built_wheel) as archive:
        shipped_files = {name: archive.read(name).decode("utf-8", "replace")
                         for name in archive.namelist()}
    notebooks = sorted(n for n in shipped_files if n.endswith(".ipynb"))
    assert notebooks == sorted(WHEEL_TUTORIALS + p.name for p in NOTEBOOKS.glob("*.ipynb"))
    for name in notebooks:
        cells = json.loads(shipped_files[name])["cells"]
        assert not [c for c in cells if is_solution(c)], name
    assert not [n for n in shipped_files if n.endswith("nbtape_graded.json")]
    secrets = _secrets()
    found = [(line, name) for line in secrets for name, text in shipped_files.items()
             if line in text]
    assert not found, found


@pytest.mark.slow
@pytest.mark.filterwarnings("ignore::sqlalchemy.exc.SAWarning")   # nbgrader's own sessions
def test_with_only_the_wheel_a_teacher_copies_the_tutorials_and_grades_a_course(
        tmp_path, built_wheel):
    """A fresh venv (this machine's packages beside it, nbtape only from the wheel), run
    from a folder with no checkout: copy the tutorials out, build a course, release 01
    and grade a solved submission (every mark) and the released one (none)."""
    from gradcheck import run_checked

    env_dir = tmp_path / "venv"
    run_checked([sys.executable, "-m", "venv", "--system-site-packages", env_dir])
    py = env_dir / "bin" / "python"
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env["PATH"] = f"{env_dir / 'bin'}{os.pathsep}{env.get('PATH', '')}"
    run_checked([py, "-m", "pip", "install", "-q", "--no-deps", "--no-index", built_wheel],
                env=env)
    work = tmp_path / "work"
    work.mkdir()
    where = run_checked([py, "-c", "import nbtape; print(nbtape.__file__)"], cwd=work,
                        env=env).stdout
    assert where.startswith(str(env_dir)), where        # the wheel's nbtape, not a checkout's

    module = [py, "-m", "nbtape.notebook.exercises.course"]
    out = run_checked(module + ["tutorials", "mine"], cwd=work, env=env).stdout
    assert "contents.ipynb" in out
    copied = {p.name for p in (work / "mine").iterdir()}
    assert {p.name for p in TUTORIALS} <= copied
    assert "<details>" not in (work / "mine" / "03_gradient_tape_basics.ipynb").read_text()

    out = run_checked(module + ["build", "course", "01", "03_"], cwd=work, env=env).stdout
    assert "2 assignments" in out and "hold no solutions" in out, out
    course = work / "course"
    assert (course / "nbtape_graded.json").is_file()
    source = nbformat.read(course / "source" / "01_what_is_autodiff"
                           / "01_what_is_autodiff.ipynb", 4)
    assert "no reference answer here" in "\n".join(c.source for c in source.cells)

    nbgrader = [py, "-m", "nbgrader"]
    run_checked(nbgrader + ["generate_assignment", "01_what_is_autodiff", "--force"],
                cwd=course, env=env)
    released = course / "release" / "01_what_is_autodiff" / "01_what_is_autodiff.ipynb"
    blank = nbformat.read(released, 4)
    solved = nbformat.read(released, 4)
    tutorial = nbformat.read(NOTEBOOKS / "01_what_is_autodiff.ipynb", 4)
    answer = next(c for c in solved.cells if c.metadata.get("nbgrader", {}).get("solution"))
    answer.source += "\n" + solution_code(next(c for c in tutorial.cells if is_solution(c)))
    for student, nb in {"solved": solved, "blank": blank}.items():
        folder = course / "submitted" / student / "01_what_is_autodiff"
        folder.mkdir(parents=True)
        nbformat.write(nb, folder / "01_what_is_autodiff.ipynb")
        run_checked(nbgrader + ["autograde", "01_what_is_autodiff", "--student", student,
                                "--force"], cwd=course, env=env)
    from nbgrader.api import Gradebook
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gradebook:
        scores = {s: gradebook.find_submission("01_what_is_autodiff", s).score
                  for s in ("solved", "blank")}
    assert scores == {"solved": 1.0, "blank": 0.0}
