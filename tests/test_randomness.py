"""``nbtape.transforms.randomness``: the generators a function can reach, one search for
``nt.function`` and ``recompute_grad``."""
import functools
import random

import numpy as np

from nbtape.transforms.randomness import drawn, random_states, replayed


class _Model:
    def __init__(self):
        self.rng = np.random.default_rng(1)

    def noise(self):
        return self.rng.normal()


def test_the_search_reaches_closures_arguments_partials_and_attributes():
    a, b, c = np.random.default_rng(0), np.random.RandomState(0), random.Random(0)
    m = _Model()
    found = {id(g) for g, _ in random_states(functools.partial(lambda x, g: a.normal(), g=b),
                                             (m, [c]), {})}
    assert {id(a), id(b), id(c), id(m.rng)} <= found
    assert {id(g) for g, _ in random_states(m.noise)} >= {id(m.rng)}


def test_drawn_names_what_drew():
    states = random_states(lambda: None)
    assert drawn(states) == ""
    random.random()
    assert "Python's random module" in drawn(states)
    states = random_states(lambda: None)
    np.random.rand()
    assert "np.random's global generator" in drawn(states)


def test_replayed_gives_the_first_runs_draws_and_leaves_the_stream_as_it_was():
    g = np.random.default_rng(5)
    states = random_states(lambda: g.normal())
    first = g.normal()
    after = g.bit_generator.state
    with replayed(states):
        assert g.normal() == first
    assert g.bit_generator.state == after
