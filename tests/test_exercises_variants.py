"""A course's own graded data (``variants``): drawn once per course, kept, read back.

Every drawn check accepts the right answers on any course's data
(``tests/test_exercises.py``); here: the draws are the course's (a seed gives the same,
another seed other data, different from the self-checks'), they survive JSON, a
rebuild keeps them, and a missing file says how to make one.
"""
import json

import pytest

from nbtape.notebook.exercises import exercises, feedback
from nbtape.notebook.exercises.variants import FILE, draw_course, read, write


def test_every_check_that_runs_a_function_on_its_own_data_draws_a_courses():
    drawn = draw_course(7)
    assert sorted(drawn) == sorted(id for id, ex in exercises().items() if ex.draw)
    assert {"07-chain-paths", "07b-jvp-by-hand", "10-checkpoint-segment",
            "11-quadratic-fit", "12-clip-global"} <= set(drawn)
    assert json.loads(json.dumps(drawn)) == drawn
    others = [draw_course(seed) for seed in range(8, 12)]
    for id in drawn:
        assert len({json.dumps(d[id]) for d in [drawn] + others}) == 5, id


def test_a_course_keeps_its_data(tmp_path):
    path = write(tmp_path)                          # a secret seed
    first = path.read_text()
    assert path.name == FILE and json.loads(first)["exercises"] == read(path)
    write(tmp_path, seed=1)
    assert path.read_text() == first
    assert read(write(tmp_path / "other")) != read(path)


def test_a_missing_file_says_how_to_make_one(tmp_path):
    with pytest.raises(FileNotFoundError, match="course build COURSE_DIR"):
        read(tmp_path / FILE)


def test_the_courses_data_reaches_the_check():
    def fit_quadratic(x, y):                         # remembers nothing: fits
        import numpy as np
        return tuple(np.polyfit(x, y, 2))
    cases = draw_course(3)["11-quadratic-fit"]
    assert cases["coefficients"] != [0.8, -1.2, 0.5]
    assert feedback("11-quadratic-fit", fit_quadratic, **cases).message == \
        "fit_quadratic calls np.polyfit: the exercise asks for the training loop (a tape " \
        "and an optimizer), not a solver"
