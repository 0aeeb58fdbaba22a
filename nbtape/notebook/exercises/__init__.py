"""The tutorials' exercises: checks that say what is wrong, and a graded-course layout.

A check cell in a tutorial holds one call, ``nt.exercises.check("03-gradient", answer)``:
it prints ``correct``, or ``not yet:`` and what is still wrong (which part, the shape
expected, where a gradient goes wrong, what a finite difference gives, the first op
where the learner's tape leaves the reference's), never the answer.

The self-checks are formative: their references and data ship here, so a learner who
wants to can read or guess an answer.  The graded path is the course: strict checks
hand the answer in, and the course's autograde step judges it in a fresh Python,
outside the student's kernel, on data of the course's own that no install holds.

Modules: ``catalogue`` (the exercises by id, ``check`` and ``feedback``), ``feedback``
(the words of a verdict, and comparing a learner's function or tape with the
reference), ``early``, ``later`` and ``further`` (the checks of tutorials 01-06 with 03c, 07-13,
and 05c, 07b, 10 and 15), ``handin`` (an answer as JSON, shown by a strict check),
``grader`` (judging it in a fresh Python), ``autograde`` (nbgrader's step that does so),
``variants`` (a course's own graded data, drawn once), ``tutorial_cells`` (reading a
tutorial's answer, check and solution cells), ``learner_copy`` (the tutorials without
their solutions, as the wheel ships them), ``course`` (``python3 -m
nbtape.notebook.exercises.course build DIR`` lays the tutorials out as an nbgrader
course; ``... course tutorials DIR`` copies them out) and ``otter_assignment`` (the same
as an Otter-Grader assignment).
"""
from .catalogue import check, exercises, feedback
from .feedback import Feedback, NotYet

__all__ = ["check", "feedback", "exercises", "Feedback", "NotYet"]
