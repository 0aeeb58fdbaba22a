"""nbtape/core/owned.py: a tensor owns its array, whatever the user writes into the
arrays it came from (an ``out=`` buffer numpy returns, a view of a plain operand)."""
import numpy as np

import nbtape as nt
from nbtape.core.owned import changeable, own_outputs, own_result
from nbtape.core.tensor import Tensor


def test_changeable_sees_through_views_to_a_writeable_base():
    a = np.ones(4)
    v = a[:2]
    v.flags.writeable = False
    assert changeable(a) and changeable(v)          # v's base can still change
    assert not changeable(2.0) and not changeable(None) and not changeable([1.0])


def test_a_read_only_flag_that_can_be_flipped_back_is_no_proof():
    frozen = np.ones(2)
    frozen.flags.writeable = False
    view = frozen[1:]
    assert changeable(frozen) and changeable(view)  # the owner can set writeable again
    frozen.flags.writeable = True                   # (as numpy allows)
    fixed = np.frombuffer(b"\x00" * 16)             # immutable bytes: cannot change
    assert not changeable(fixed) and not changeable(fixed[1:])
    assert changeable(np.frombuffer(bytearray(16)))


def test_an_out_buffer_result_gets_its_own_copy():
    buf = np.ones(3)
    out = Tensor(buf)
    own_result(out, [nt.constant(1.0), buf], None)
    buf[:] = 7.0
    assert out.numpy().tolist() == [1.0, 1.0, 1.0]
    kept = np.zeros(2)
    t = Tensor(kept)
    own_result(t, [np.ones(2)], None)               # not an argument: left as it is
    assert t._value is kept


def test_an_output_viewing_a_plain_operand_gets_its_own_copy():
    buf = np.arange(4.0)
    outs = (Tensor(buf[1:]), Tensor(np.zeros(2)))
    own_outputs(outs, [[buf]], {"k": 1})
    buf[:] = -1.0
    assert outs[0].numpy().tolist() == [1.0, 2.0, 3.0]

