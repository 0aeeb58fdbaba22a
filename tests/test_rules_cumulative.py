"""nbtape/rules/cumulative.py: the array-API cumulative functions on 0-d inputs."""
import numpy as np
import pytest

import nbtape as nt
from gradcheck import check_both, needs_numpy


@needs_numpy("cumulative_prod", "cumulative_sum")
@pytest.mark.parametrize("include_initial", [False, True])
@pytest.mark.parametrize("value", [0.0, 1.5, -2.0])
@pytest.mark.parametrize("name", ["cumulative_prod", "cumulative_sum"])
def test_cumulative_of_a_0d_input(name, value, include_initial):
    fn = getattr(np, name)
    check_both(lambda x: fn(x, include_initial=include_initial), np.array(value))


@needs_numpy("cumulative_prod")
def test_cumulative_prod_of_a_0d_exact_zero_has_gradient_one():
    x = nt.constant(0.0)
    with nt.GradientTape() as t:
        t.watch(x)
        y = np.cumulative_prod(x)
    g = t.gradient(y, x)
    assert g.shape == () and float(g) == 1.0
    with nt.ForwardAccumulator(x, 1.0) as acc:
        y = np.cumulative_prod(x)
    np.testing.assert_array_equal(acc.jvp(y).numpy(), [1.0])
