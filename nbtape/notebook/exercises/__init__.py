"""The tutorials' exercises: checks that say what is wrong, and a graded-course layout.

A check cell in a tutorial holds one call, ``nt.exercises.check("03-gradient", answer)``:
it prints ``correct``, or ``not yet:`` and what is still wrong (which part, the shape
expected, where a gradient goes wrong, what a finite difference gives, the first op
where the learner's tape leaves the reference's), never the answer.  The reference
answers live in this package, not in the notebook.

Modules: ``catalogue`` (the exercises by id, ``check`` and ``feedback``), ``feedback``
(the words of a verdict, and comparing a learner's function or tape with the
reference), ``early`` and ``later`` (the checks of tutorials 01-06 and 07-14),
``course`` (``python3 -m nbtape.notebook.exercises.course build DIR`` lays the
tutorials out as an nbgrader course).
"""
from .catalogue import check, exercises, feedback
from .feedback import Feedback, NotYet

__all__ = ["check", "feedback", "exercises", "Feedback", "NotYet"]
