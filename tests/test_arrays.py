"""nbtape/core/arrays.py: arrays of other libraries, recognised by protocol.

A "foreign" array is one numpy dispatches to (NEP 13 and 18) that is neither an
``np.ndarray`` nor a number: nbtape carries it as it is.  ``to_numpy`` computes or
copies it to the host, ``backend_name`` names its library, and the two error makers
say what to do when libraries mix or a rule needs a function the library lacks.
A stand-in class plays the foreign library here (tests/test_dask.py and
tests/test_cupy.py use the real ones).
"""
import numpy as np
import pytest

import nbtape as nt
from nbtape.core.arrays import (FLOAT_SCALARS, SCALAR_METAS, UNIMPLEMENTED, backend_name,
                                is_foreign, mixed_backends_error, to_numpy,
                                unimplemented_error)


class LazyArray:
    """A foreign array: numpy's protocols, a dtype, and ``compute()`` as Dask has."""
    __module__ = "lazylib.core"

    def __init__(self, value):
        self.value = np.asarray(value)

    dtype = property(lambda self: self.value.dtype)
    shape = property(lambda self: self.value.shape)
    ndim = property(lambda self: self.value.ndim)

    def __array_function__(self, func, types, args, kwargs):
        return NotImplemented

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        return NotImplemented

    def compute(self):
        return self.value


class DeviceArray(LazyArray):
    """A device array: ``get()`` copies to the host, as CuPy's does."""
    __module__ = "devicelib"

    compute = None

    def get(self):
        return self.value.copy()


class LazyDeviceArray(LazyArray):
    """A lazy array whose computed value lives on a device (Dask over CuPy)."""

    def compute(self):
        return DeviceArray(self.value)


@pytest.mark.parametrize("value", [
    np.ones(2), np.float64(1.0), np.int8(3), np.bool_(True), 1.0, 2, 1j, True, None,
    [1.0], (1.0,), {"a": 1}, "text", np.ma.masked_array([1.0]),
], ids=lambda v: type(v).__name__)
def test_numpys_own_values_and_pythons_are_not_foreign(value):
    assert not is_foreign(value)
    assert backend_name(value) == "numpy"


def test_an_array_of_another_library_is_foreign():
    assert is_foreign(LazyArray([1.0])) and is_foreign(DeviceArray([1.0]))
    assert backend_name(LazyArray([1.0])) == "lazylib"
    assert backend_name(DeviceArray([1.0])) == "devicelib"


def test_an_object_with_only_some_of_the_protocol_is_not_foreign():
    class NoUfunc:
        dtype = np.dtype(float)

        def __array_function__(self, *a):
            return NotImplemented

    class NoDtype:
        def __array_function__(self, *a):
            return NotImplemented

        def __array_ufunc__(self, *a, **k):
            return NotImplemented
    assert not is_foreign(NoUfunc()) and not is_foreign(NoDtype())


def test_nbtapes_own_tensors_and_variables_are_not_foreign():
    assert not is_foreign(nt.constant([1.0])) and not is_foreign(nt.Variable(1.0))


def test_to_numpy():
    out = to_numpy([1.0, 2.0])
    assert type(out) is np.ndarray and out.tolist() == [1.0, 2.0]
    a = np.arange(3.0)
    assert to_numpy(a) is a
    lazy = to_numpy(LazyArray([1.0, 2.0]))
    assert type(lazy) is np.ndarray and lazy.tolist() == [1.0, 2.0]
    device = to_numpy(DeviceArray([3.0]))
    assert type(device) is np.ndarray and device.tolist() == [3.0]
    both = to_numpy(LazyDeviceArray([4.0, 5.0]))
    assert type(both) is np.ndarray and both.tolist() == [4.0, 5.0]
    assert to_numpy(2.5).shape == () and float(to_numpy(2.5)) == 2.5


def test_the_scalar_table_holds_each_number_types_shape_and_dtype():
    for t, (shape, dtype) in SCALAR_METAS.items():
        assert shape == () and dtype == np.dtype(t) == t(0).dtype
    for t in (np.float64, np.float32, np.int64, np.bool_, np.complex128, np.uint8):
        assert t in SCALAR_METAS
    assert np.datetime64 not in SCALAR_METAS and np.str_ not in SCALAR_METAS
    assert FLOAT_SCALARS == {t for t, (_, d) in SCALAR_METAS.items() if d.kind in "fc"}
    assert np.float16 in FLOAT_SCALARS and np.complex64 in FLOAT_SCALARS
    assert np.int32 not in FLOAT_SCALARS and np.bool_ not in FLOAT_SCALARS


def test_mixed_backends_error_names_both_libraries_and_the_fix():
    exc = TypeError("cannot mix")
    err = mixed_backends_error("np.add", [np.ones(2), [DeviceArray([1.0, 2.0])]], exc)
    assert isinstance(err, TypeError)
    text = str(err)
    assert "np.add got arrays of different libraries (numpy and devicelib)" in text
    assert "TypeError: cannot mix" in text and "t.numpy()" in text


@pytest.mark.parametrize("values", [
    [np.ones(2), np.ones(3)],                       # one library: the failure is another
    [np.ones(2), DeviceArray(1.0)],                 # a 0-d foreign value does not count
    [np.float64(1.0), DeviceArray([1.0])],          # nor does a numpy scalar
    [],
])
def test_mixed_backends_error_is_none_when_libraries_do_not_mix(values):
    assert mixed_backends_error("np.add", values, ValueError("x")) is None


def test_unimplemented_error_names_the_missing_function_and_the_mode():
    warning = FutureWarning(f"The `numpy.partition` function {UNIMPLEMENTED}. Computing ...")
    err = unimplemented_error("np.median", warning)
    assert isinstance(err, nt.NoGradientRuleError)
    assert str(err).startswith("the reverse-mode gradient of np.median needs numpy.partition")
    fwd = unimplemented_error("np.median", FutureWarning("no name given"), mode="forward")
    assert "forward-mode gradient of np.median needs a numpy function" in str(fwd)
