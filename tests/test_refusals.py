"""``nbtape.transforms.refusals``: a refused trace says what froze, where, and the fix."""
import numpy as np
import pytest

import nbtape as nt
from nbtape.transforms.refusals import refusal_message
from nbtape.transforms.trace import TracingError


@pytest.mark.parametrize("how, fix", [("bool()", "np.where"), ("float()", "keep it a tensor"),
                                      ("np.asarray", "nt.constant(np.eye(5))[labels]")])
def test_each_escape_names_its_fix(how, fix):
    msg = refusal_message(how, None)
    assert msg.startswith("nt.function cannot trace this function") and fix in msg
    assert "The variables were left as they were" in msg


def test_a_rule_that_reads_a_value_in_python_is_named_as_nbtapes_own():
    def step(x):
        x = nt.constant(x)
        with nt.GradientTape() as tape:
            tape.watch(x)
            y = np.linalg.det(x)
        return tape.gradient(y, x)

    with pytest.raises(TracingError, match="nbtape's own"):
        nt.function(step)(np.eye(2))
