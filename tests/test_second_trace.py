"""``nbtape.transforms.second_trace``: the checks that trace a step once more, frozen draws
and numbers parsed out of a traced value's text (issue 36)."""
import random

import numpy as np
import pytest

import nbtape as nt
from nbtape.transforms.trace import TracingError


def test_a_step_without_draws_or_text_is_run_once():
    runs = []

    @nt.function
    def step(x):
        runs.append(1)
        return np.sum(np.sin(x) * 2.0)

    step(np.ones(3))
    step(np.zeros(3))
    assert len(runs) == 1


def test_a_draw_made_inside_the_step_is_refused_at_the_line_it_enters():
    def step(x):
        return x + np.random.default_rng().normal(size=x.shape)

    with pytest.raises(TracingError, match=r"another constant in np.add at line \d+ of "
                                           r"test_second_trace.py"):
        nt.function(step)(np.zeros(4))


def test_a_shown_value_is_checked_by_a_second_trace_whose_prints_are_hidden(capsys):
    runs = []
    w = nt.Variable([1.0, 2.0])

    @nt.function
    def step(x):
        runs.append(1)
        loss = np.sum(w * x)
        print("loss", loss)
        w.assign_sub(0.5 * x)
        return loss

    step(np.array([1.0, 1.0]))
    assert len(runs) == 2 and capsys.readouterr().out.count("loss") == 1
    # the variables as the first trace (one update) left them, never twice updated
    np.testing.assert_array_equal(w.numpy(), [0.5, 1.5])
    step(np.array([1.0, 1.0]))
    np.testing.assert_array_equal(w.numpy(), [0.0, 1.0])


def test_a_number_parsed_from_a_shown_value_is_refused_and_variables_given_back():
    w = nt.Variable([1.0, 2.0])

    def step(x):
        w.assign_add(x)
        return x * float(str(np.sum(x)).split("(", 1)[1].split(",", 1)[0])

    with pytest.raises(TracingError, match="shown as text"):
        nt.function(step)(np.array([1.0, 2.0]))
    np.testing.assert_array_equal(w.numpy(), [1.0, 2.0])


def test_a_draw_that_repeats_is_refused_and_the_generators_given_back():
    state = random.getstate()

    def step(x):
        return x * 2.0 + random.randrange(1)

    with pytest.raises(TracingError, match=r"drawn at line \d+ of test_second_trace.py"):
        nt.function(step)(np.zeros(2))
    assert random.getstate() == state
