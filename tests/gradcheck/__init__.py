"""The one module of helpers the tests share (no test module imports another).

First order, against central differences (float64 inputs; ``wrt`` picks the positional
arguments to differentiate; ``seed`` the random weights and directions):
``check_reverse(f, *args)`` compares the tape's gradient of ``sum(f(*args) * w)``
(random weights ``w``, so every output element matters; one per output if ``f``
returns a tuple), ``check_forward(f, *args)`` ``ForwardAccumulator`` JVPs along random
directions, ``check_both`` does both.
Second order: ``check_hvp`` and ``check_second`` (Hessian-vector products by nested
tapes), ``check_reverse_over_forward`` (a tape over JVPs).
Random programs: ``directional_differences`` and ``judge``.
Exact answers: ``gradients_of_sum``.  Inputs: ``randn``, ``crandn`` and ``Draws`` (with
the matrix makers ``spd`` and ``lopsided``).  The numpy at hand: ``NUMPY``,
``since_numpy``, ``needs_numpy``, ``numpy_param``.  Not gradients: ``nbtape_frames``
(errors raised from the user's line), ``run_checked`` and ``fresh_venv`` (environment
tests).
"""
import contextlib
import os
import subprocess
import sys
import traceback
import venv
from pathlib import Path

import numpy as np
import pytest

import nbtape as nt
from nbtape.transforms.check import numerical_gradient
from nbtape.core.registry import RULES, numpy_function


# --- first order -----------------------------------------------------------------------------
def _rng(seed=0):
    return np.random.default_rng(seed)


def _weights(f, args, rng):
    """Random weights for each output (a list of them when ``f`` returns several)."""
    out = f(*[np.asarray(a) for a in args])
    if isinstance(out, (tuple, list)):
        return [_weight(np.asarray(o), rng) for o in out]
    return _weight(np.asarray(out), rng)


def _weight(out, rng):
    w = rng.standard_normal(out.shape)
    if out.dtype.kind == "c":
        w = w + 1j * rng.standard_normal(out.shape)
    return w


def _real_scalar(f, w):
    def h(*a):
        y = f(*a)
        if isinstance(w, list):
            return sum(np.real(np.sum(yi * wi)) for yi, wi in zip(y, w))
        return np.real(np.sum(y * w))
    return h


def numeric_grad(h, args, k, eps):
    """Central differences of the real scalar ``h`` w.r.t. ``args[k]`` (nbtape's own)."""
    return numerical_gradient(h, args, k, eps)


def _prepare(args, wrt):
    """Arrays for array-likes, and the float/complex positions to differentiate."""
    args = [np.asarray(a) if isinstance(a, (list, float, int, complex, np.ndarray, np.generic))
            else a for a in args]
    wrt = range(len(args)) if wrt is None else wrt
    wrt = [k for k in wrt if isinstance(args[k], np.ndarray) and args[k].dtype.kind in "fc"]
    tensors = [nt.constant(a) if isinstance(a, np.ndarray) else a for a in args]
    return args, wrt, tensors


def check_reverse(f, *args, wrt=None, eps=1e-6, rtol=1e-5, atol=1e-6, seed=0):
    rng = _rng(seed)
    args, wrt, tensors = _prepare(args, wrt)
    w = _weights(f, args, rng)
    h = _real_scalar(f, w)
    with nt.GradientTape() as tape:
        for k in wrt:
            tape.watch(tensors[k])
        y = h(*tensors)
    grads = tape.gradient(y, [tensors[k] for k in wrt], unconnected_gradients="zero")
    for k, g in zip(wrt, grads):
        num = numeric_grad(h, args, k, eps)
        got = g.numpy()
        assert got.shape == args[k].shape, (got.shape, args[k].shape)
        assert got.dtype == args[k].dtype, (got.dtype, args[k].dtype)
        np.testing.assert_allclose(got, num, rtol=rtol, atol=atol,
                                   err_msg=f"reverse-mode gradient of argument {k}")


def check_forward(f, *args, wrt=None, eps=1e-6, rtol=1e-5, atol=1e-6, seed=1):
    rng = _rng(seed)
    args, wrt, tensors = _prepare(args, wrt)
    tangents = []
    for k in wrt:
        t = rng.standard_normal(args[k].shape)
        if args[k].dtype.kind == "c":
            t = t + 1j * rng.standard_normal(args[k].shape)
        tangents.append(t.astype(args[k].dtype))
    with nt.ForwardAccumulator([tensors[k] for k in wrt], tangents) as acc:
        y = f(*tensors)
    outs = y if isinstance(y, (list, tuple)) else [y]
    jvps = [acc.jvp(o, unconnected_gradients="zero") for o in outs]

    def shifted(s):
        a = list(args)
        for k, t in zip(wrt, tangents):
            a[k] = args[k] + s * t
        r = f(*a)
        return [np.asarray(v) for v in (r if isinstance(r, (list, tuple)) else [r])]
    plus, minus = shifted(eps), shifted(-eps)
    for j, p, m in zip(jvps, plus, minus):
        num = (p - m) / (2 * eps)
        np.testing.assert_allclose(j.numpy(), num, rtol=rtol, atol=atol,
                                   err_msg="forward-mode JVP")


def check_both(f, *args, **kw):
    check_reverse(f, *args, **kw)
    check_forward(f, *args, **{k: v for k, v in kw.items() if k != "seed"})


# --- second order ----------------------------------------------------------------------------
def check_hvp(f, x, eps=1e-5, rtol=1e-5, atol=1e-6, seed=3):
    """Second order: a Hessian-vector product of ``sum(w * f(x)**2)`` by nested tapes
    (so every VJP used runs on tensors under the outer tape) against central
    differences of the first-order gradient.  Squaring gives even a linear ``f`` a
    Hessian."""
    r = np.random.default_rng(seed)
    w = r.standard_normal(np.shape(f(x)))
    v = r.standard_normal(np.shape(x))
    _check_hessian_vector(lambda a: np.sum(w * f(a) ** 2), x, v, eps, rtol, atol)


def check_second(f, x, eps=1e-5, rtol=1e-4, atol=1e-5, seed=5):
    """Second order for a function with curvature of its own: as ``check_hvp``, for
    ``sum(w * f(x))`` (looser tolerances: the ufuncs' second derivatives are steep)."""
    r = np.random.default_rng(seed)
    w = r.standard_normal(np.shape(f(x)))
    v = r.standard_normal(np.shape(x))
    _check_hessian_vector(lambda a: np.sum(f(a) * w), x, v, eps, rtol, atol)


def _check_hessian_vector(scalar, x, v, eps, rtol, atol):
    def grad(x0):
        xt = nt.constant(x0)
        with nt.GradientTape() as t:
            t.watch(xt)
            y = scalar(xt)
        return t.gradient(y, xt, unconnected_gradients="zero").numpy()

    xt = nt.constant(x)
    with nt.GradientTape() as outer:
        outer.watch(xt)
        with nt.GradientTape() as inner:
            inner.watch(xt)
            y = scalar(xt)
        gv = np.sum(inner.gradient(y, xt) * v)
    hv = outer.gradient(gv, xt, unconnected_gradients="zero").numpy()
    num = (grad(x + eps * v) - grad(x - eps * v)) / (2 * eps)
    np.testing.assert_allclose(hv, num, rtol=rtol, atol=atol, err_msg="Hessian-vector product")


def check_reverse_over_forward(f, x, eps=1e-5, rtol=1e-5, atol=1e-6, seed=4):
    """Mixed mode: the gradient of <w, JVP> (the JVP rules then run on tensors under a
    tape) against central differences of the first-order JVP."""
    r = np.random.default_rng(seed)
    w = r.standard_normal(np.shape(f(x)))
    v = r.standard_normal(np.shape(x))

    def jvp_dot_w(x0, watch=None):
        xt = nt.constant(x0)
        if watch is not None:
            watch.watch(xt)
        with nt.ForwardAccumulator(xt, v) as acc:
            y = f(xt)
        return xt, np.real(np.sum(w * acc.jvp(y)))

    with nt.GradientTape() as tape:
        xt, s = jvp_dot_w(x, tape)
    got = tape.gradient(s, xt, unconnected_gradients="zero").numpy()
    num = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        e = np.zeros_like(x)
        e[i] = eps
        num[i] = (float(jvp_dot_w(x + e)[1]) - float(jvp_dot_w(x - e)[1])) / (2 * eps)
    np.testing.assert_allclose(got, num, rtol=rtol, atol=atol, err_msg="reverse over forward")


# --- random programs: judged at two step sizes -----------------------------------------------
def directional_differences(h, xs, vs, eps=(1e-6, 1e-4)):
    """Central differences of the real scalar ``h(*xs)`` along ``vs``, one per step size."""
    out = []
    for e in eps:
        # asarray: a 0-d array plus a step is a numpy scalar, which some numpy
        # functions treat differently (nanmax(where=False) gives nan on one)
        plus = h(*[np.asarray(x + e * v) for x, v in zip(xs, vs)])
        minus = h(*[np.asarray(x - e * v) for x, v in zip(xs, vs)])
        out.append((plus - minus) / (2 * e))
    return out


def judge(derivative, diffs, scale=1.0, rtol=1e-4):
    """Does ``derivative`` match the central differences ``diffs`` (two step sizes)?

    Where the two step sizes disagree with each other the point is not smooth enough
    to judge (no false alarms): None.  Otherwise True when ``derivative`` matches
    either.  ``scale`` is the size of the function's terms, for round-off.
    """
    tol = rtol * (1 + abs(diffs[0])) + 1e-9 * scale
    if not np.all(np.isfinite(diffs)) or abs(diffs[0] - diffs[1]) > tol:
        return None
    return any(abs(derivative - d) <= tol for d in diffs)


# --- exact answers ---------------------------------------------------------------------------
def gradients_of_sum(f, *values):
    """The tape's gradients of ``sum(f(*values))`` for float64 ``values``, as arrays
    (zeros where a value is unconnected): for tests that know the exact answer.

    >>> [g.tolist() for g in gradients_of_sum(np.maximum, [1.0, 3.0], [2.0, 2.0])]
    [[0.0, 1.0], [1.0, 0.0]]
    """
    xs = [nt.constant(np.asarray(v, dtype=float)) for v in values]
    with nt.GradientTape() as tape:
        tape.watch(xs)
        y = np.sum(f(*xs))
    return [g.numpy() for g in tape.gradient(y, xs, unconnected_gradients="zero")]


# --- inputs ----------------------------------------------------------------------------------
def randn(rng, *shape):
    """Standard normal draws of ``shape`` from ``rng``."""
    return rng.standard_normal(shape)


def crandn(rng, *shape):
    """Complex draws: standard normal real and imaginary parts."""
    return rng.standard_normal(shape) + 1j * rng.standard_normal(shape)


class Draws:
    """One test's random inputs: a generator from ``seed`` and the matrix makers the
    linear-algebra rule tests share.  Made inside each test (the ``draws`` fixture in
    conftest.py), never at module level, so a test sees the same numbers whatever ran
    before it.

    >>> a = Draws(2).randn(2); b = Draws(2).randn(2)
    >>> bool((a == b).all()), Draws(2).crandn(3).dtype
    (True, dtype('complex128'))
    >>> m = Draws(2).spd(3, 3, complex_=True)
    >>> bool(np.allclose(m, np.conj(m.T))), bool(np.all(np.linalg.eigvalsh(m) > 0))
    (True, True)
    """

    def __init__(self, seed):
        self.rng = np.random.default_rng(seed)

    def randn(self, *shape):
        return randn(self.rng, *shape)

    def crandn(self, *shape):
        return crandn(self.rng, *shape)

    def spd(self, *shape, complex_=False):
        """A Hermitian positive-definite matrix with well separated eigenvalues."""
        a = (self.crandn if complex_ else self.randn)(*shape)
        return a @ np.conj(np.swapaxes(a, -1, -2)) + np.diag(np.arange(1.0, shape[-1] + 1))

    def lopsided(self, *shape, complex_=False):
        """``spd`` plus noise on both triangles (and on the diagonal's imaginary part):
        numpy's eigh and cholesky read one triangle, so the gradient must not leak into
        the other."""
        a = self.spd(*shape, complex_=complex_)
        return a + 0.3 * (self.crandn if complex_ else self.randn)(*shape)


# --- the numpy at hand -----------------------------------------------------------------------
NUMPY = np.lib.NumpyVersion(np.__version__)


def since_numpy(version, what):
    """Skip on a numpy older than ``version``, which does not have ``what`` yet."""
    return pytest.mark.skipif(NUMPY < version, reason=f"{what} is new in numpy {version}")


def needs_numpy(*names):
    """Skip where this numpy lacks ``np.<name>`` (the array-API names are new in numpy 2)."""
    missing = [f"np.{n}" for n in names if numpy_function(n) is None]
    return pytest.mark.skipif(bool(missing),
                              reason=f"numpy {np.__version__} has no {', '.join(missing)}")


def numpy_param(name, *values, **kw):
    """``pytest.param(np.<name>, *values)``, skipped where this numpy lacks ``np.<name>``."""
    return pytest.param(numpy_function(name), *values, marks=needs_numpy(name), **kw)


# --- not gradients: what the error-message and environment tests share -----------------------
def nbtape_frames(exc):
    """The traceback frames of ``exc`` inside nbtape's engine, besides the @user_facing
    wrapper (an error raised from the user's line has none)."""
    return [f for f in traceback.extract_tb(exc.__traceback__)
            if "/nbtape/" in f.filename and not f.filename.endswith("errors.py")]


def run_checked(cmd, **kw):
    """``subprocess.run(cmd)`` (items may be paths) capturing its text; a failure raises
    an AssertionError that shows the command and the tail of its output."""
    proc = subprocess.run([str(c) for c in cmd], capture_output=True, text=True, **kw)
    if proc.returncode != 0:
        raise AssertionError(f"{' '.join(map(str, cmd))} failed ({proc.returncode}):\n"
                             f"{proc.stdout[-4000:]}\n{proc.stderr[-4000:]}")
    return proc


def build_dist(outdir):
    """Build nbtape's sdist, then its wheel from that sdist, into ``outdir`` with
    ``python -m build``: the wheel's path.  The build runs in a copy unpacked from the
    sdist, never in the checkout, so builds running side by side cannot collide in
    its ``build/`` folder."""
    root = Path(__file__).resolve().parents[2]
    clean = {k: v for k, v in os.environ.items()
             if k not in ("PYTHONPATH", "VIRTUAL_ENV", "NBTAPE_GRAPHVIZ")}
    run_checked([sys.executable, "-m", "build", "--outdir", outdir, root], cwd=outdir.parent,
                env=clean)
    wheels = sorted(Path(outdir).glob("nbtape-*-py3-none-any.whl"))
    assert len(wheels) == 1, sorted(p.name for p in Path(outdir).iterdir())
    return wheels[0]


def fresh_venv(env_dir):
    """A new virtual environment with pip in ``env_dir``: its python, and the environment
    variables to run it with (this process's, without PYTHONPATH or VIRTUAL_ENV, and the
    venv's bin first on PATH)."""
    venv.EnvBuilder(with_pip=True).create(env_dir)
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env["PATH"] = f"{env_dir / 'bin'}{os.pathsep}{env.get('PATH', '')}"
    return env_dir / "bin" / "python3", env


def registered(module):
    """Names of the rules whose VJPs or JVPs ``module`` defines (``defderiv``'s
    wrappers count for the module of their derivative)."""
    names = set()
    for r in RULES.values():
        fns = [*r.vjps, *r.jvps, r.vjp_all, r.jvp_all, *(r.kwvjps or {}).values(),
               *(r.kwjvps or {}).values()]
        fns = [getattr(f, "derivative", f) for f in fns if f is not None]
        if any(getattr(f, "__module__", None) == module.__name__ for f in fns):
            names.add(r.name)
    return names


def rule_case_tests(module, cases, check=None):
    """The two tests each rule module's test file runs, made for ``module``: every rule
    it registers has a case in ``cases`` (``{rule name: rng -> [(f, *args), ...]}``), and
    each case matches central differences in both modes (``check(f, *args)``, by default
    ``check_both``).  A test file binds them to module-level names so pytest finds them::

        test_every_rule_has_a_case, test_rule_matches_finite_differences = \\
            rule_case_tests(differences, CASES)
    """
    # a case for a function this numpy lacks (np.astype before numpy 2) has no rule here
    known = {r.name for r in RULES.values()}
    names = sorted(set(registered(module)) | (set(cases) & known))
    check = check or check_both

    def test_every_rule_has_a_case():
        found = registered(module)
        assert found, f"no rule found for {module.__name__}"
        assert found <= set(cases), f"{module.__name__} registers rules with no case: " \
            f"{sorted(found - set(cases))}: add them to CASES"

    @pytest.mark.parametrize("name", names)
    def test_rule_matches_finite_differences(name, rng):
        for f, *args in cases[name](rng):
            check(f, *args)
    return test_every_rule_has_a_case, test_rule_matches_finite_differences


def broadcast_pair(rng):
    """Two random shapes (up to 3 axes, sides up to 3) that broadcast together."""
    base = [int(n) for n in rng.integers(1, 4, rng.integers(1, 4))]

    def one():
        s = [1 if rng.random() < 0.3 else n for n in base]
        return tuple(s[rng.integers(0, len(s) + 1):])
    return one(), one()


@nt.custom_gradient
def log1pexp(x):
    """log(1 + e^x) with the stable gradient 1 - 1/(1 + e^x) (the guide's example 14)."""
    e = np.exp(x)

    def grad(dy):
        return dy * (1 - 1 / (1 + e))
    return np.log(1 + e), grad


@contextlib.contextmanager
def no_rules_left_behind():
    """Rules that a test (or a notebook cell it runs) gives functions of its own are
    forgotten when it ends, so the global registry (and ``nt.coverage()``) sees none."""
    from nbtape.extend import unregister
    before = set(RULES)
    try:
        yield
    finally:
        for key in set(RULES) - before:
            unregister(key)
