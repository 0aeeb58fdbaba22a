"""A course's own graded data: the points, cases and seeds its checks run answers on.

The self-checks in an installed nbtape run a learner's function on the tutorial's own
data (07's three points, 10's eight cases, 11's noisy quadratic...), and the install
holds that data and the answers to it: they are formative.  A course drawn with
``course build`` gets data of its own for every check that runs the learner's function
(the exercises with a ``draw``), written once to ``COURSE/nbtape_graded.json`` beside
nbgrader's gradebook, which students never get; the course's autograde step hands
it to the judge.  A function that only remembers what the shipped self-check accepts
(11's three numbers, a table of 10's cases) earns nothing there.  The file holds the
drawn values themselves, not only the seed, so a course grades alike under a later
nbtape whose draws differ.  Answers that are values (03's gradient, 13's norms) follow
from the question the notebook asks and are the same in every course.
"""
import json
import pathlib
import secrets
import zlib

import numpy as np

from .catalogue import exercises

FILE = "nbtape_graded.json"


def draw_course(seed):
    """Every drawn check's keyword arguments for the course ``seed``: ``{id: {...}}``.

    >>> drawn = draw_course(38)
    >>> sorted(drawn)[:3], drawn == draw_course(38), drawn == draw_course(39)
    (['02-value-exp', '06-round-ste', '07-chain-paths'], True, False)
    """
    return {id: ex.draw(np.random.default_rng([seed, zlib.crc32(id.encode())]))
            for id, ex in exercises().items() if ex.draw is not None}


def write(course_dir, seed=None):
    """Write ``course_dir/nbtape_graded.json`` for ``seed`` (a new secret one if None),
    unless the course has one already (its grading stays as it was); returns its path.

    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as course:
    ...     first = read(write(course, seed=1))
    ...     again = read(write(course, seed=2))           # kept: the course's own
    >>> first == again == draw_course(1)
    True
    """
    path = pathlib.Path(course_dir) / FILE
    if not path.exists():
        seed = secrets.randbits(62) if seed is None else int(seed)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps({"seed": seed, "exercises": draw_course(seed)}, indent=1) + "\n")
    return path


def read(path):
    """The graded keyword arguments stored at ``path``: ``{id: {...}}``.

    A missing file is an error that says how to make one: grading a course on the
    shipped self-checks' data would let remembered answers through.
    """
    path = pathlib.Path(path)
    if not path.is_file():
        raise FileNotFoundError(
            f"the course's graded data {path} is missing: run `python3 -m "
            "nbtape.notebook.exercises.course build COURSE_DIR` again in the course "
            "folder (it draws the data once and keeps it), or copy the file back")
    return json.loads(path.read_text())["exercises"]
