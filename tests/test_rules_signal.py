"""nbtape/rules/signal.py: np.convolve and np.correlate against finite differences."""
import numpy as np
import pytest

from gradcheck import check_both, check_hvp, check_reverse_over_forward

LENGTHS = [(5, 3), (3, 5), (4, 4), (1, 4), (4, 1), (2, 5), (6, 2)]


@pytest.mark.parametrize("complex_", [False, True])
@pytest.mark.parametrize("mode", ["full", "same", "valid"])
@pytest.mark.parametrize("n, m", LENGTHS)
@pytest.mark.parametrize("fn", [np.convolve, np.correlate])
def test_convolve_and_correlate(fn, n, m, mode, complex_):
    rng = np.random.default_rng(n * 10 + m)

    def draw(k):
        x = rng.standard_normal(k)
        return x + 1j * rng.standard_normal(k) if complex_ else x
    check_both(lambda a, v: fn(a, v, mode), draw(n), draw(m))
    check_both(lambda a, v: fn(a, v, mode=mode), draw(n), draw(m))


def test_default_modes_constants_and_second_order():
    rng = np.random.default_rng(3)
    a, v = rng.standard_normal(5), rng.standard_normal(3)
    check_both(np.convolve, a, v)
    check_both(np.correlate, a, v)
    check_both(lambda a: np.convolve(a, [1.0, -2.0, 0.5]), a)
    check_both(lambda v: np.correlate(a, v, "same"), v)
    check_hvp(lambda a: np.convolve(a, a, "same"), a)
    check_reverse_over_forward(lambda a: np.correlate(a, a[::-1], "full"), a)


def test_convolve_reads_a_0d_operand_as_one_sample():
    """As numpy does (np.correlate refuses 0-d); the random-program test found an
    IndexError in the backward pass."""
    check_both(np.convolve, np.array(-2.5), np.array(0.7))
    check_both(np.convolve, np.array(1.5), np.array([0.3, -1.2, 0.8]))
    check_both(np.convolve, np.array([0.3, -1.2]), np.array(0.8))
