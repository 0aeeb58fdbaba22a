import numpy as np
import pytest

from gradcheck import check_both



@pytest.mark.parametrize("f, shapes", [
    (np.add, [(3, 1), (4,)]),
    (np.multiply, [(2, 3), (3,)]),
    (np.true_divide, [(2, 3), (1, 3)]),
    (np.sin, [(3,)]),
    (lambda x: np.sum(x, axis=0, keepdims=True), [(3, 2)]),
    (np.matmul, [(2, 3), (3, 4)]),
    (np.matmul, [(3,), (3, 4)]),
    (np.matmul, [(2, 3), (3,)]),
    (lambda x: x[1:, ::2], [(3, 4)]),
    (lambda x, y: np.concatenate([x, y], axis=1), [(2, 2), (2, 3)]),
])
def test_rule_matches_finite_differences(f, shapes, rng):
    args = [rng.standard_normal(s) + (3.0 if f is np.true_divide else 0.0) for s in shapes]
    check_both(f, *args)
