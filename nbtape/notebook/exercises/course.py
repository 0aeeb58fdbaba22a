"""Lay the tutorials out as an nbgrader course: ``source/<assignment>/<notebook>.ipynb``.

    python3 -m nbtape.notebook.exercises.course build COURSE_DIR [PREFIX ...] [--notebooks DIR]

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
``autograde`` step in, which judges each handed-in answer outside the student's kernel.
The course's ``source/`` folder is the TA's answer key: keep it from students.
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
from .otter_assignment import otter_version
from .tutorial_cells import (FOLDED, given_lines, is_solution, nbgrader_meta,
                             solution_code, strict)

CONFIG = """\
# Written by `python3 -m nbtape.notebook.exercises.course build`.
c = get_config()  # noqa: F821 (nbgrader's configuration loader defines it)
c.CourseDirectory.course_id = "nbtape"
# Every check cell's verdict comes from a fresh Python, not the learner's kernel:
from nbtape.notebook.exercises.autograde import configure  # noqa: E402
configure(c)
"""


def instructor_version(nb):
    """The course's source notebook for a tutorial: solutions in their answer cells.

    Returns None for a tutorial without graded cells.
    """
    out = copy.deepcopy(nb)
    answers = [c for c in out.cells if nbgrader_meta(c).get("solution")]
    solutions = [c for c in out.cells if is_solution(c)]
    if not answers and not solutions:
        return None
    if len(answers) != len(solutions):
        raise ValueError(f"{len(answers)} answer cells but {len(solutions)} solution cells")
    for answer, solution in zip(answers, solutions):
        given_lines(answer.source)          # (checks the cell has its marker line)
        # the learner's cell as it is (its stub runs first, then the solution replaces
        # it); nbgrader cuts the solution region out and, with the course's empty code
        # stub, the released cell is the tutorial's again, signature and all
        answer.source = (answer.source.rstrip("\n") + "\n### BEGIN SOLUTION\n"
                         + solution_code(solution) + "\n### END SOLUTION")
    for cell in out.cells:
        if cell.cell_type == "markdown":
            cell.source = FOLDED.sub("", cell.source)
        if nbgrader_meta(cell).get("grade") and cell.cell_type == "code":
            cell.source = strict(cell.source)
        if cell.cell_type == "code":
            cell.outputs, cell.execution_count = [], None
    out.cells = [c for c in out.cells if not is_solution(c)]
    return out


def build(course_dir, notebooks_dir, prefixes=()):
    """Write ``course_dir/source/<stem>/<stem>.ipynb`` for every tutorial with exercises
    (those whose names start with one of ``prefixes``, if given), the same tutorial as an
    Otter-Grader master notebook in ``course_dir/otter/<stem>/<stem>.ipynb``, and the
    course's ``nbgrader_config.py``; returns the assignment names."""
    course = pathlib.Path(course_dir)
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
        otter = course / "otter" / path.stem / path.name
        otter.parent.mkdir(parents=True, exist_ok=True)
        nbformat.write(otter_version(nbformat.read(path, as_version=4), path.stem), otter)
        names.append(path.stem)
    config = course / "nbgrader_config.py"
    if not config.exists():
        config.write_text(CONFIG)
    return names


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python3 -m nbtape.notebook.exercises.course",
                                     description="Lay the tutorials out as an nbgrader course.")
    sub = parser.add_subparsers(dest="command", required=True)
    b = sub.add_parser("build", help="write COURSE_DIR/source/<assignment>/<notebook>.ipynb")
    b.add_argument("course_dir")
    here = pathlib.Path(PACKAGE_DIR).parent / "notebooks"     # (a checkout's)
    b.add_argument("--notebooks", default=str(here),
                   help="the folder of the tutorials (default: this checkout's notebooks/)")
    b.add_argument("prefixes", nargs="*", help="only tutorials whose names start so")
    args = parser.parse_args(argv)
    if not pathlib.Path(args.notebooks).is_dir():
        parser.error(f"no tutorials at {args.notebooks}: the tutorials are not part of the "
                     "installed package (their folded solutions would put the answer key in "
                     "every student's install); give --notebooks DIR, the notebooks/ folder "
                     "of a checkout of nbtape")
    names = build(args.course_dir, args.notebooks, args.prefixes)
    print(f"{len(names)} assignments in {pathlib.Path(args.course_dir) / 'source'}: "
          + ", ".join(names))
    return 0


if __name__ == "__main__":
    sys.exit(main())
