"""The tutorials' exercises by id, and ``check``: the one call a check cell makes.

Each exercise is a function that takes what the learner made (a value, a function,
a tape) and raises ``NotYet`` saying what is still wrong; its reference answer lives
beside it, in ``early`` or ``later``, out of the notebook's sight.  ``points`` is
what the exercise is worth in a graded course (``course`` reads it).
"""
from typing import Callable, NamedTuple

from .feedback import Feedback, NotYet


class Exercise(NamedTuple):
    """One check: its id (``"03-gradient"``), its function, and its points."""
    id: str
    run: Callable
    points: int


def exercise(registry, id, points=1):
    """Decorator: file the check under ``id`` in ``registry`` (a module's dict).

    >>> table = {}
    >>> @exercise(table, "00-demo")
    ... def demo(answer):
    ...     if answer != 1:
    ...         raise NotYet("not one")
    >>> sorted(table), table["00-demo"].points
    (['00-demo'], 1)
    """
    def register(run):
        registry[id] = Exercise(id, run, points)
        return run
    return register


def exercises():
    """Every exercise, ``{id: Exercise}`` in the tutorials' order.

    >>> list(exercises())[:2]
    ['01-finite-difference', '02-value-exp']
    """
    from . import early, later
    return {**early.EXERCISES, **later.EXERCISES}


def feedback(id, *args, **kwargs):
    """The verdict on an answer as a ``Feedback`` (``.passed``, ``.message``); no output.

    >>> feedback("03-gradient", None)
    not yet: `answer` is still None: the exercise asks for the gradient as an array of shape (3,)
    """
    table = exercises()
    if id not in table:
        raise ValueError(f"there is no exercise {id!r}; the exercises are: "
                         + ", ".join(table))
    try:
        table[id].run(*args, **kwargs)
    except NotYet as reason:
        return Feedback(False, str(reason))
    return Feedback(True)


def check(id, *args, strict=False, **kwargs):
    """Print whether the answer to exercise ``id`` is right, and if not, what is wrong.

    A check cell holds only this call, e.g. ``nt.exercises.check("03-gradient", answer)``.
    ``strict=True`` (the graded course's test cells) also raises ``AssertionError``
    with the same words when the answer is not right, which is how nbgrader's
    autograder sees a failed test.

    >>> check("03-gradient", None)
    not yet: `answer` is still None: the exercise asks for the gradient as an array of shape (3,)
    """
    verdict = feedback(id, *args, **kwargs)
    print(verdict)
    if strict and not verdict:
        raise AssertionError(f"{id}: {verdict}")
