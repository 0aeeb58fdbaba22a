"""The tutorials' exercises by id, and ``check``: the one call a check cell makes.

Each exercise is a function that takes what the learner made (a value, a function,
a tape) and raises ``NotYet`` saying what is still wrong; its reference answer lives
beside it, in ``early`` or ``later``, out of the notebook's sight.
"""
from . import early, further, later
from .feedback import Feedback, NotYet
from .handin import hand_in

# Ids a tutorial was renumbered away from: a notebook saved before keeps checking.
# (The %%tape magic was notebook 14 before it took its place after notebook 3.)
RENAMED = {"14-tape-magic": "03c-tape-magic"}


def _tutorial(id):
    """The sort key of an exercise id: its tutorial's number, then its letter."""
    number = id.split("-")[0]
    digits = "".join(c for c in number if c.isdigit())
    return int(digits), number[len(digits):]


def exercises():
    """Every exercise, ``{id: Exercise}`` in the tutorials' order.

    >>> list(exercises())[:2]
    ['01-finite-difference', '02-value-exp']
    """
    order = {**early.EXERCISES, **later.EXERCISES, **further.EXERCISES}
    return dict(sorted(order.items(), key=lambda item: _tutorial(item[0])))


def feedback(id, *args, **kwargs):
    """The verdict on an answer as a ``Feedback`` (``.passed``, ``.message``); no output.

    >>> feedback("03-gradient", [1.0, 2.0])
    not yet: `answer` has shape (2,); the exercise asks for shape (3,)
    """
    id = RENAMED.get(id, id)
    table = exercises()
    if id not in table:
        raise ValueError(f"there is no exercise {id!r}; the exercises are: "
                         + ", ".join(table))
    try:
        table[id].run(*args, **kwargs)
    except NotYet as reason:
        return Feedback(False, str(reason))
    except TypeError as error:          # the wrong number of answers, or of an odd kind
        return Feedback(False, f"the check could not read the answer ({error}): pass "
                               "what the exercise asks for, as the check cell does")
    except Exception as error:          # never a crash: say what the answer made happen
        return Feedback(False, f"checking the answer raised {type(error).__name__}: "
                               f"{error}")
    return Feedback(True)


def check(id, *args, strict=False, **kwargs):
    """Print whether the answer to exercise ``id`` is right, and if not, what is wrong.

    A check cell holds only this call, e.g. ``nt.exercises.check("03-gradient", answer)``.
    ``strict=True`` (the graded course's test cells) also hands the answer in (an
    output that the course's grader judges in a fresh Python, see ``handin``) and
    raises ``AssertionError`` with the same words when the answer is not right.

    >>> check("09-buggy", None, None)
    not yet: `buggy` is still None: the exercise asks for a name as a string, such as "swish"
    """
    id = RENAMED.get(id, id)
    if strict:
        hand_in(id, args)
    verdict = feedback(id, *args, **kwargs)
    print(f"{verdict}\n", end="")      # one write: the saved output is one stream
    if strict and not verdict:
        raise AssertionError(f"{id}: {verdict}")
