"""The course's autograde step: every check cell's verdict comes from outside the kernel.

nbgrader runs a submission in one kernel, the learner's cells and the test cells
together, and scores a test cell by its output (an error: no points).  Whatever the
learner's cells did to that kernel (replace the checker, numpy's comparisons, builtins,
the import system, IPython's traceback) could decide the score.  ``GradeHandedIn``
runs after nbgrader's ``Execute``: for each graded ``nt.exercises.check(ID, ...,
strict=True)`` cell (the id read from the cell's source, which nbgrader restores from
its database) it takes the answer that the cell handed in (``handin``), judges it with
``grader.grade_elsewhere`` on the course's own graded data (``variants``: read from the
teacher's ``nbtape_graded.json``, never from the hand-in) and replaces all the cell's
outputs with that verdict.  A cell whose output holds no handed-in answer gets no points.

``configure(c, graded=PATH)``, called from the course's ``nbgrader_config.py``, puts the
step in.
"""
import re

from nbconvert.preprocessors import Preprocessor
from nbformat.v4 import new_output
from traitlets import Bool, Unicode

from .feedback import Feedback
from .handin import MIME

_CHECK = re.compile(r"""\A\s*nt\.exercises\.check\(\s*["']([\w-]+)["'].*strict=True\)\s*\Z""",
                    re.S)


def exercise_of(cell):
    """The exercise id a graded check cell names, else None.

    >>> from nbformat.v4 import new_code_cell
    >>> cell = new_code_cell('nt.exercises.check("09-buggy", buggy, strict=True)')
    >>> cell.metadata["nbgrader"] = {"grade": True, "solution": False, "points": 1}
    >>> exercise_of(cell)
    '09-buggy'
    """
    meta = cell.get("metadata", {}).get("nbgrader", {})
    if cell.get("cell_type") != "code" or not meta.get("grade") or meta.get("solution"):
        return None
    found = _CHECK.match(cell.get("source", ""))
    return found.group(1) if found else None


def handed_in(cell, id):
    """The answer the cell's outputs hold for ``id`` (the last one), else None."""
    found = [o["data"][MIME] for o in cell.get("outputs", [])
             if MIME in o.get("data", {}) and isinstance(o["data"][MIME], dict)
             and o["data"][MIME].get("id") == id]
    return found[-1] if found else None


def verdict_outputs(id, verdict):
    """The outputs nbgrader scores: a stream for ``correct``, an error otherwise.

    >>> [o.output_type for o in verdict_outputs("09-buggy", Feedback(True))]
    ['stream']
    >>> verdict_outputs("09-buggy", Feedback(False, "not that one"))[0].evalue
    '09-buggy: not yet: not that one'
    """
    if verdict:
        return [new_output("stream", name="stdout", text=f"{verdict}\n")]
    return [new_output("error", ename="AssertionError", evalue=f"{id}: {verdict}",
                       traceback=[f"AssertionError: {id}: {verdict}"])]


class GradeHandedIn(Preprocessor):
    """nbconvert step: each graded check cell's outputs become the outside verdict."""

    enabled = Bool(True)        # nbconvert's steps are off until enabled; this one is on
    graded = Unicode("", help="the course's nbtape_graded.json ('': the self-checks' data)"
                     ).tag(config=True)

    def preprocess_cell(self, cell, resources, index):
        id = exercise_of(cell)
        if id is None:
            return cell, resources
        from .grader import grade_elsewhere
        from .variants import read
        data = handed_in(cell, id)
        if data is None:
            verdict = Feedback(False, "the cell handed in no answer: run the notebook from "
                                      "the top and leave the check cells as they are")
        else:
            # only the id and the answer come from the submission; the data is the course's
            graded = read(self.graded).get(id, {}) if self.graded else {}
            verdict = grade_elsewhere({"id": id, "args": data.get("args", []),
                                       "graded": graded})
        cell.outputs = verdict_outputs(id, verdict)
        return cell, resources


def configure(c, graded=None):
    """Put ``GradeHandedIn`` into nbgrader's autograde steps, right after ``Execute``, with
    the course's graded data ``graded`` (the path of its ``nbtape_graded.json``; checked
    here, so a course whose file went missing stops before grading anyone), and make
    nbgrader's code stub empty: a released answer cell keeps the tutorial's stub
    (``def fixed_loss(w): return None``), not ``raise NotImplementedError()``."""
    if graded is not None:
        from .variants import read
        read(graded)
        c.GradeHandedIn.graded = str(graded)
    c.ClearSolutions.code_stub = {"python": ""}
    from nbconvert.preprocessors import ClearMetadataPreprocessor
    from nbgrader.preprocessors import (AssignLatePenalties, CheckCellMetadata, Execute,
                                        IgnorePattern, LimitOutput, SaveAutoGrades)
    c.Autograde.autograde_preprocessors = [
        Execute, GradeHandedIn, IgnorePattern, ClearMetadataPreprocessor, LimitOutput,
        SaveAutoGrades, AssignLatePenalties, CheckCellMetadata]
