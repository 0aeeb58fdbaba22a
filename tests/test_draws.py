"""nbtape.training.draws: each draw a pure function of a three-word state, one recorded op
per numpy method, with no gradient."""
import numpy as np
import pytest

import nbtape as nt
from nbtape.training.draws import DRAWS, METHODS, STEP, initial_state, numbers_of, philox_at


def _state(k0, k1, count):
    return np.array([k0, k1, count], dtype=np.uint64)


def test_the_numbers_are_a_function_of_the_state_alone():
    s = _state(11, 22, 5)
    a = numbers_of(s, "standard_normal", (("size", (1000,)),))
    assert np.array_equal(a, numbers_of(s.copy(), "standard_normal", (("size", (1000,)),)))
    for other in (_state(12, 22, 5), _state(11, 23, 5), _state(11, 22, 6)):
        b = numbers_of(other, "standard_normal", (("size", (1000,)),))
        assert not np.array_equal(a, b)
        assert abs(np.corrcoef(a, b)[0, 1]) < 0.15       # unrelated streams


def test_a_draw_reads_philox_at_the_states_count_in_the_counters_top_word():
    g = philox_at(_state(1, 2, 7))
    state = g.bit_generator.state["state"]
    assert state["counter"].tolist() == [0, 0, 0, 7] and state["key"].tolist() == [1, 2]
    # a long draw never reaches the next count's counter (2**192 blocks apart)
    big = numbers_of(_state(1, 2, 7), "random", (("size", (10_000,)),))
    nxt = numbers_of(_state(1, 2, 8), "random", (("size", (10_000,)),))
    assert not np.isin(nxt[:100], big).any()


def test_step_moves_only_the_count_and_cannot_be_changed():
    assert STEP.tolist() == [0, 0, 1] and STEP.dtype == np.uint64
    with pytest.raises(ValueError):
        STEP[2] = 5
    assert initial_state([3, 4]).tolist() == [3, 4, 0]


def test_every_method_is_numpys_and_has_its_own_op_without_a_gradient():
    for method in METHODS:
        assert callable(getattr(np.random.Generator, method)), method
        assert DRAWS[method].__name__ == method
    state = nt.Variable(initial_state([5, 6]), trainable=False)
    p = nt.Variable(0.4)
    with nt.GradientTape() as tape:
        tape.watch(state)
        k = DRAWS["binomial"](state, (("size", (3,)),), 10, p)
        z = DRAWS["standard_normal"](state, (("size", (3,)),))
    assert len(tape.ops) == 0            # constants to the tape: nothing recorded
    assert isinstance(k, nt.Tensor) and k.dtype == np.int64 and z.shape == (3,)
    # (the op itself does not move the state: Generator does, by an assign_add)
    assert state.numpy().tolist() == [5, 6, 0]


def test_the_ops_take_plain_arrays_too():
    out = DRAWS["integers"](_state(1, 1, 0), (("size", (4,)),), 0, 3)
    assert type(out) is np.ndarray and out.shape == (4,) and out.max() < 3


def test_nt_function_records_a_draw_as_a_call_on_the_states_read():
    state = nt.Variable(initial_state([8, 9]), trainable=False)

    def step(x):
        z = DRAWS["standard_normal"](state, (("size", (2,)),))
        state.assign_add(STEP)
        return x + z
    traced = nt.function(step)
    eager = [step(np.zeros(2)).numpy() for _ in range(6)]
    state.assign(initial_state([8, 9]))
    replayed = [traced(np.zeros(2)).numpy() for _ in range(6)]
    assert all(np.array_equal(a, b) for a, b in zip(eager, replayed))
    assert traced.trace_count == 1 and state.numpy().tolist() == [8, 9, 6]
    lines = str(traced.program(np.zeros(2))).splitlines()
    assert any("nt.random.standard_normal(v" in line for line in lines)
    assert any(".assign_add(" in line for line in lines)
