"""Lay the tutorials out as an nbgrader course: ``source/<assignment>/<notebook>.ipynb``.

    python3 -m nbtape.notebook.exercises.course build COURSE_DIR [PREFIX ...] [--notebooks DIR]
    python3 -m nbtape.notebook.exercises.course tutorials DIR     # the tutorials, to work in

The tutorials as shipped are the learners' version: the answer cell holds a neutral
stub after ``# your code here``, the check cell calls ``nt.exercises.check``, and one
solution sits in a collapsed ``<details>`` markdown cell that Run All never runs.
Their answer and check cells already carry nbgrader's metadata (``grade_id``,
``points``, ``schema_version`` 3).  The course version, one assignment per tutorial,
appends the solution to the answer cell between ``### BEGIN SOLUTION`` and
``### END SOLUTION`` (after the stub, so the released cell keeps the stub's signature),
drops the ``<details>`` cell and the sentence that points at it, and makes each check
strict (``strict=True`` hands the answer in and raises when it is wrong).  The
``nbgrader_config.py`` it writes makes nbgrader's code stub empty and puts the
``autograde`` step in, which judges each handed-in answer outside the student's kernel,
on the course's own graded data (``variants``: ``nbtape_graded.json``, drawn once).
The course's ``source/`` folder is the TA's answer key, and ``nbtape_graded.json`` the
data it is graded on: keep both from students.

The tutorials come from a checkout's ``notebooks/`` (solutions and all), else from the
installed package, whose copy has no solutions (``learner_copy``): the course is then
built and graded the same, but its ``source/`` holds no reference answers (give
``--notebooks`` a checkout's ``notebooks/`` for those) and no Otter assignment is written.
Then, in COURSE_DIR::

    nbgrader generate_assignment 03_gradient_tape_basics   # release/: solutions out
    nbgrader autograde 03_gradient_tape_basics             # grades submitted/
"""
import argparse
import copy
import pathlib
import sys

import nbformat

from ...diagnostics.user_line import PACKAGE_DIR
from . import variants
from .learner_copy import shipped, write_learner_copies
from .otter_assignment import otter_version
from .tutorial_cells import (FOLDED, given_lines, is_solution, nbgrader_meta,
                             solution_code, strict)

# a checkout's tutorials (beside its pyproject.toml); an installed nbtape has its own copy
CHECKOUT = pathlib.Path(PACKAGE_DIR).parent / "notebooks"

CONFIG = """\
# Written by `python3 -m nbtape.notebook.exercises.course build`.
c = get_config()  # noqa: F821 (nbgrader's configuration loader defines it)
c.CourseDirectory.course_id = "nbtape"
# Every check cell's verdict comes from a fresh Python, not the learner's kernel, on the
# course's own data (nbtape_graded.json, beside this file: keep it from students):
import os  # noqa: E402
from nbtape.notebook.exercises.autograde import configure  # noqa: E402
configure(c, graded=os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                 "nbtape_graded.json"))
"""


def tutorials_folder():
    """Where the tutorials are: a checkout's ``notebooks/``, else the installed copy.

    >>> tutorials_folder().is_dir()
    True
    """
    if CHECKOUT.is_dir() and (CHECKOUT.parent / "pyproject.toml").is_file():
        return CHECKOUT
    return shipped()


def instructor_version(nb):
    """The course's source notebook for a tutorial: solutions in their answer cells.

    Returns None for a tutorial without graded cells.  A tutorial with no solution cells
    (an installed nbtape's copy) gets an empty solution region: the course grades it
    alike, but its source notebook is no answer key.
    """
    out = copy.deepcopy(nb)
    answers = [c for c in out.cells if nbgrader_meta(c).get("solution")]
    solutions = [c for c in out.cells if is_solution(c)]
    if not answers and not solutions:
        return None
    if solutions and len(answers) != len(solutions):
        raise ValueError(f"{len(answers)} answer cells but {len(solutions)} solution cells")
    codes = [solution_code(s) for s in solutions] or [
        "# (no reference answer here: build the course from a checkout's notebooks/)"
    ] * len(answers)
    for answer, code in zip(answers, codes):
        given_lines(answer.source)          # (checks the cell has its marker line)
        # the learner's cell as it is (its stub runs first, then the solution replaces
        # it); nbgrader cuts the solution region out and, with the course's empty code
        # stub, the released cell is the tutorial's again, signature and all
        answer.source = (answer.source.rstrip("\n") + "\n### BEGIN SOLUTION\n"
                         + code + "\n### END SOLUTION")
    for cell in out.cells:
        if cell.cell_type == "markdown":
            cell.source = FOLDED.sub("", cell.source)
        if nbgrader_meta(cell).get("grade") and cell.cell_type == "code":
            cell.source = strict(cell.source)
        if cell.cell_type == "code":
            cell.outputs, cell.execution_count = [], None
    out.cells = [c for c in out.cells if not is_solution(c)]
    return out


def build(course_dir, notebooks_dir, prefixes=(), seed=None):
    """Write ``course_dir/source/<stem>/<stem>.ipynb`` for every tutorial with exercises
    (those whose names start with one of ``prefixes``, if given), the same tutorial as an
    Otter-Grader master notebook in ``course_dir/otter/<stem>/<stem>.ipynb`` (for a
    tutorial with its solution), the course's ``nbgrader_config.py`` and its graded data
    ``nbtape_graded.json`` (drawn from ``seed``, a secret one if None; both kept if the
    course has them); returns the assignment names."""
    course = pathlib.Path(course_dir)
    variants.write(course, seed)
    names = []
    for path in sorted(pathlib.Path(notebooks_dir).glob("[0-9]*.ipynb")):
        if prefixes and not path.name.startswith(tuple(prefixes)):
            continue
        version = instructor_version(nbformat.read(path, as_version=4))
        if version is None:
            continue
        target = course / "source" / path.stem / path.name
        target.parent.mkdir(parents=True, exist_ok=True)
        nbformat.write(version, target)
        tutorial = nbformat.read(path, as_version=4)
        if any(is_solution(c) for c in tutorial.cells):
            otter = course / "otter" / path.stem / path.name
            otter.parent.mkdir(parents=True, exist_ok=True)
            nbformat.write(otter_version(tutorial, path.stem), otter)
        names.append(path.stem)
    config = course / "nbgrader_config.py"
    if not config.exists():
        config.write_text(CONFIG)
    return names


def copy_tutorials(target):
    """Copy the tutorials (the learner's copy: no solutions) into the folder ``target``,
    which must not hold any of them yet; returns the names copied."""
    target, folder = pathlib.Path(target), tutorials_folder()
    there = sorted(p.name for p in folder.glob("*.ipynb") if (target / p.name).exists())
    if there:
        raise FileExistsError(f"{target} already holds {', '.join(there[:3])}"
                              f"{' ...' if len(there) > 3 else ''}: copy the tutorials into "
                              "a new folder (your work there stays as it is)")
    return write_learner_copies(folder, target)


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python3 -m nbtape.notebook.exercises.course",
                                     description="Lay the tutorials out as an nbgrader course.")
    sub = parser.add_subparsers(dest="command", required=True)
    b = sub.add_parser("build", help="write COURSE_DIR/source/<assignment>/<notebook>.ipynb")
    b.add_argument("course_dir")
    b.add_argument("--notebooks", default=None,
                   help="the folder of the tutorials (default: a checkout's notebooks/, "
                        "else the installed package's copy, which has no solutions)")
    b.add_argument("--seed", type=int, default=None,
                   help="draw the course's graded data from this seed (default: a secret "
                        "one; kept in COURSE_DIR/nbtape_graded.json)")
    b.add_argument("prefixes", nargs="*", help="only tutorials whose names start so")
    t = sub.add_parser("tutorials", help="copy the tutorials (without solutions) into DIR")
    t.add_argument("dir")
    args = parser.parse_args(argv)
    if args.command == "tutorials":
        try:
            names = copy_tutorials(args.dir)
        except FileExistsError as error:
            parser.error(str(error))
        print(f"{len(names)} files in {args.dir}: open {args.dir}/contents.ipynb "
              "(the tutorials' contents page) in Jupyter")
        return 0
    notebooks = pathlib.Path(args.notebooks) if args.notebooks else tutorials_folder()
    if not notebooks.is_dir():
        parser.error(f"no tutorials at {notebooks}: give --notebooks DIR, the notebooks/ "
                     "folder of a checkout of nbtape (or reinstall nbtape: its wheel has "
                     "them)")
    names = build(args.course_dir, notebooks, args.prefixes, seed=args.seed)
    print(f"{len(names)} assignments in {pathlib.Path(args.course_dir) / 'source'}: "
          + ", ".join(names))
    if not any(is_solution(c) for p in notebooks.glob("[0-9]*.ipynb")
               for c in nbformat.read(p, as_version=4).cells):
        print(f"The tutorials in {notebooks} hold no solutions (an installed nbtape's "
              "copy): source/ has no reference answers and no Otter assignment was "
              "written; grading works the same. For the answer key, build again with "
              "--notebooks, the notebooks/ folder of a checkout of nbtape.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
