"""nt.random.Generator: numpy's method names, state in a Variable, draws that nt.function
replays afresh (bit for bit the eager run's), gradients through the reparameterised
parameters, copies, spawns and errors at the user's line."""
import copy
import pickle

import numpy as np
import pytest

import nbtape as nt
from gradcheck import check_both, nbtape_frames


def same(a, b):
    a = a.numpy() if isinstance(a, (nt.Tensor, nt.Variable)) else np.asarray(a)
    b = b.numpy() if isinstance(b, (nt.Tensor, nt.Variable)) else np.asarray(b)
    return a.dtype == b.dtype and a.shape == b.shape and np.array_equal(a, b)


# the same seed, the same numbers; others differ ----------------------------------------------
def test_the_same_seed_gives_the_same_numbers_and_another_seed_others():
    a, b, c = nt.random.Generator(7), nt.random.Generator(7), nt.random.Generator(8)
    for _ in range(3):
        x, y, z = a.normal(size=(3, 4)), b.normal(size=(3, 4)), c.normal(size=(3, 4))
        assert isinstance(x, nt.Tensor) and same(x, y) and not same(x, z)
    assert not same(a.normal(size=5), a.normal(size=5))      # each draw moves the state on


def test_each_draw_is_one_count_further_and_the_key_stays():
    gen = nt.random.Generator(3)
    key = gen.state.numpy()[:2].copy()
    assert gen.state.dtype == np.uint64 and gen.state.shape == (3,) and not gen.state.trainable
    gen.random(4)
    gen.normal(0.0, 2.0, size=(2, 2))
    gen.choice(5, size=3)
    assert np.array_equal(gen.state.numpy(), np.append(key, np.uint64(3)))


def test_seeds_numpy_takes_are_taken():
    for seed in (0, 2 ** 64 + 5, np.int32(4), [1, 2, 3], np.random.SeedSequence(9)):
        nt.random.Generator(seed).random()
    assert same(nt.random.Generator([1, 2]).random(3), nt.random.Generator([1, 2]).random(3))
    assert same(nt.random.default_rng(5).random(3), nt.random.Generator(5).random(3))
    assert not same(nt.random.Generator().random(3), nt.random.Generator().random(3))


def test_spawned_generators_are_reproducible_and_independent():
    kids = nt.random.Generator(0).spawn(3)
    again = nt.random.Generator(0).spawn(3)
    draws = [k.random(100).numpy() for k in kids]
    assert all(same(d, k.random(100)) for d, k in zip(draws, again))
    parent = nt.random.Generator(0).random(100).numpy()
    for i in range(3):
        assert abs(np.corrcoef(draws[i], parent)[0, 1]) < 0.35
        for j in range(i):
            assert not same(draws[i], draws[j])
            assert abs(np.corrcoef(draws[i], draws[j])[0, 1]) < 0.35
    parent_gen = nt.random.Generator(0)
    first, second = parent_gen.spawn(1)[0], parent_gen.spawn(1)[0]      # numpy's rule: new kids
    assert not same(first.random(5), second.random(5))


# every method ----------------------------------------------------------------------------------
CALLS = [
    ("random", (), {"size": (2, 3)}), ("standard_normal", (), {"size": 4}),
    ("standard_exponential", (), {"size": 4}), ("standard_gamma", (2.0,), {"size": 3}),
    ("normal", (1.0, 2.0, (2, 2)), {}), ("uniform", (-1.0, 3.0, 5), {}),
    ("exponential", (2.0, 3), {}), ("lognormal", (0.0, 0.5, 3), {}),
    ("gamma", (2.0, 3.0, 3), {}), ("laplace", (0.0, 1.0, 3), {}),
    ("logistic", (0.0, 1.0, 3), {}), ("gumbel", (0.0, 1.0, 3), {}),
    ("integers", (0, 10, 6), {}), ("integers", (5,), {"size": 3, "endpoint": True}),
    ("permutation", (6,), {}), ("permutation", (np.arange(12.0).reshape(4, 3),), {}),
    ("choice", (5, 3), {}), ("choice", (np.arange(6.0), 2), {"replace": False}),
    ("binomial", (10, 0.3, 4), {}), ("negative_binomial", (3, 0.5, 4), {}),
    ("poisson", (2.0, 4), {}), ("geometric", (0.4, 4), {}),
    ("hypergeometric", (5, 4, 3, 4), {}), ("beta", (2.0, 3.0, 4), {}),
    ("chisquare", (3.0, 4), {}), ("standard_t", (3.0, 4), {}),
    ("standard_cauchy", (4,), {}), ("multinomial", (10, [0.2, 0.8], 3), {}),
    ("dirichlet", ([1.0, 2.0, 3.0], 2), {}), ("vonmises", (0.0, 1.0, 4), {}),
    ("wald", (1.0, 2.0, 4), {}), ("weibull", (2.0, 4), {}), ("pareto", (3.0, 4), {}),
    ("power", (2.0, 4), {}), ("rayleigh", (2.0, 4), {}), ("zipf", (2.0, 4), {}),
    ("logseries", (0.5, 4), {}), ("triangular", (0.0, 1.0, 3.0, 4), {}),
    ("f", (3.0, 4.0, 4), {}), ("noncentral_chisquare", (3.0, 1.0, 4), {}),
    ("noncentral_f", (3.0, 4.0, 1.0, 4), {}),
]


@pytest.mark.parametrize("method, args, kwargs", CALLS, ids=[c[0] for c in CALLS])
def test_every_method_draws_numpys_shape_and_dtype_reproducibly(method, args, kwargs):
    ours = getattr(nt.random.Generator(11), method)(*args, **kwargs)
    again = getattr(nt.random.Generator(11), method)(*args, **kwargs)
    theirs = np.asarray(getattr(np.random.default_rng(11), method)(*args, **kwargs))
    assert isinstance(ours, nt.Tensor) and same(ours, again)
    assert ours.shape == theirs.shape and ours.dtype == theirs.dtype


def test_size_none_gives_the_parameters_shape_and_a_0d_tensor_for_scalars():
    gen = nt.random.Generator(0)
    assert gen.normal().shape == () and gen.integers(3).shape == ()
    assert gen.normal(np.zeros(3), np.ones((2, 1))).shape == (2, 3)
    assert gen.binomial([3, 4], 0.5).shape == (2,)
    assert gen.random(dtype=np.float32).dtype == np.float32
    assert gen.normal(size=2, dtype="float32").dtype == np.float32


# distributions, for a fixed seed ---------------------------------------------------------------
N = 200_000


def _mean_var(x):
    x = x.numpy().astype(float)
    return x.mean(), x.var()


@pytest.mark.parametrize("method, args, mean, var", [
    ("normal", (2.0, 3.0), 2.0, 9.0),
    ("uniform", (-1.0, 3.0), 1.0, 16 / 12),
    ("exponential", (2.0,), 2.0, 4.0),
    ("gamma", (3.0, 2.0), 6.0, 12.0),
    ("laplace", (1.0, 2.0), 1.0, 8.0),
    ("logistic", (0.0, 1.0), 0.0, np.pi ** 2 / 3),
    ("lognormal", (0.0, 0.5), np.exp(0.125), (np.exp(0.25) - 1) * np.exp(0.25)),
    ("binomial", (10, 0.3), 3.0, 2.1),
    ("poisson", (4.0,), 4.0, 4.0),
    ("integers", (0, 10), 4.5, 8.25),
    ("random", (), 0.5, 1 / 12),
    ("standard_normal", (), 0.0, 1.0),
])
def test_means_and_variances_are_the_distributions(method, args, mean, var):
    x = getattr(nt.random.Generator(2024), method)(*args, size=N)
    m, v = _mean_var(x)
    # five standard errors (the variance's through the fourth moment, generously)
    assert abs(m - mean) < 5 * np.sqrt(var / N)
    assert abs(v - var) < 5 * var * np.sqrt(8.0 / N) + 1e-12


def test_permutation_choice_and_shuffle_pick_what_they_should():
    gen = nt.random.Generator(5)
    assert sorted(gen.permutation(10).numpy()) == list(range(10))
    x = np.arange(12.0).reshape(4, 3)
    rows = gen.permutation(x).numpy()
    assert sorted(map(tuple, rows)) == sorted(map(tuple, x))
    cols = gen.permutation(x, axis=1).numpy()
    assert np.array_equal(np.sort(cols, axis=1), x)
    picks = gen.choice(3, size=N, p=[0.2, 0.5, 0.3]).numpy()
    assert np.allclose(np.bincount(picks) / N, [0.2, 0.5, 0.3], atol=5 * np.sqrt(0.25 / N))
    assert sorted(gen.choice(np.arange(5.0), 5, replace=False).numpy()) == [0, 1, 2, 3, 4]
    v = nt.Variable(np.arange(6.0))
    assert gen.shuffle(v) is None and sorted(v.numpy()) == list(range(6))
    a = np.arange(6.0)
    gen.shuffle(a)
    assert sorted(a) == list(range(6)) and not np.array_equal(a, np.arange(6.0))


# gradients: the reparameterised parameters, against central differences, both modes --------------
def _fresh(method, size, **fixed):
    # a new generator per call: finite differences need the same numbers at every point
    return lambda *params: getattr(nt.random.Generator(3), method)(*params, size=size, **fixed)


@pytest.mark.parametrize("method, params", [
    ("normal", ([0.5, -1.0, 2.0], [[1.5], [0.5]])),     # broadcast: (3,) and (2, 1)
    ("uniform", (-1.0, [2.0, 3.0, 4.0])),
    ("laplace", ([0.3, 0.1, -0.2], 2.0)),
    ("logistic", (1.0, [[0.5], [1.5]])),
    ("gumbel", ([0.0, 1.0, 2.0], [[1.0], [2.0]])),
    ("lognormal", ([0.1, 0.2, 0.3], 0.5)),
])
def test_location_and_scale_get_their_gradients(method, params):
    check_both(_fresh(method, (2, 3)), *params)


@pytest.mark.parametrize("method", ["normal", "uniform", "laplace", "gumbel"])
def test_gradients_for_random_broadcasting_shapes(method, rng):
    for _ in range(3):
        size = tuple(int(n) for n in rng.integers(1, 4, rng.integers(1, 4)))
        first = tuple(1 if rng.random() < 0.4 else n for n in size[rng.integers(0, len(size)):])
        second = tuple(1 if rng.random() < 0.4 else n for n in size[rng.integers(0, len(size)):])
        a = rng.uniform(0.5, 1.5, first)
        b = a + rng.uniform(0.5, 1.5, second)       # (uniform's high above its low)
        check_both(_fresh(method, size), a, b)


def test_exponential_and_gammas_scale_get_their_gradients():
    check_both(_fresh("exponential", (2, 3)), [0.5, 1.0, 2.0])
    check_both(lambda scale: nt.random.Generator(3).gamma(2.5, scale, size=(2, 3)),
               [[0.5], [2.0]])


def test_permutation_and_choice_of_an_array_pass_gradients_to_its_entries():
    x = np.random.default_rng(0).standard_normal((4, 3))
    check_both(lambda x: nt.random.Generator(1).permutation(x), x)
    check_both(lambda x: nt.random.Generator(1).permutation(x, axis=1), x)
    check_both(lambda x: nt.random.Generator(1).choice(x, size=6), x)


def test_the_numbers_are_constants_and_the_state_is_never_watched():
    gen = nt.random.Generator(0)
    p = nt.Variable(0.3)
    with nt.GradientTape(persistent=True) as tape:
        k = gen.binomial(10, p, size=3)
        z = gen.standard_normal(3)
        total = np.sum(k * z) * p
    assert all(v is not gen.state for v in tape.watched_variables())
    assert tape.gradient(np.sum(k * 1.0), p) is None    # a discrete draw: no gradient
    assert float(tape.gradient(total, p)) == pytest.approx(float(np.sum(k * z)))


# nt.function: draws are recorded ops, drawn afresh at every replay ------------------------------
def _step_of(gen, w):
    def step(x, idx_count):
        with nt.GradientTape() as tape:
            noise = gen.normal(w, np.abs(w) + 0.5, size=x.shape)
            u = gen.uniform(-w, 2.0 * w, size=x.shape)
            picks = gen.choice(x, size=idx_count)
            loss = np.sum((x + noise) ** 2 * u) + np.sum(picks * w)
        g = tape.gradient(loss, w)
        w.assign_sub(0.01 * g)
        ints = gen.integers(0, 100, size=4)
        order = gen.permutation(x)
        return loss, g, ints, order, gen.binomial(5, 0.5, size=2)
    return step


def test_replays_draw_afresh_bit_for_bit_the_eager_runs_numbers():
    eager_gen, traced_gen = nt.random.Generator(123), nt.random.Generator(123)
    eager_w, traced_w = nt.Variable(np.full(3, 0.7)), nt.Variable(np.full(3, 0.7))
    eager = _step_of(eager_gen, eager_w)
    traced = nt.function(_step_of(traced_gen, traced_w))
    rng = np.random.default_rng(0)
    seen = []
    for _ in range(7):
        x = rng.standard_normal((4, 3))
        got, want = traced(x, 5), eager(x, 5)
        for a, b in zip(got, want):
            assert same(a, b)
        assert same(traced_w, eager_w) and same(traced_gen.state, eager_gen.state)
        seen.append(got[2].numpy())
    assert traced.trace_count == 1
    assert len({s.tobytes() for s in seen}) == len(seen)       # fresh numbers every call
    before = traced_gen.state.numpy()
    text = str(traced.program(np.zeros((2, 3)), 2))     # a new signature: traced anew
    assert "nt.random.standard_normal(" in text and "read <variable random_state>" in text
    assert same(traced_gen.state, before)           # showing the program draws nothing


def _drawing_with(gen):
    def step(loc, scale, p, high, x32):
        with nt.GradientTape(persistent=True) as tape:
            tape.watch([loc, scale])
            y = gen.normal(loc, scale, size=(2, 3)) + gen.uniform(loc, loc + scale)
            z = gen.gamma(scale, loc * loc, size=3) * gen.laplace(scale, loc)
            total = np.sum(y) + np.sum(z)
        grads = tape.gradient(total, [loc, scale])
        with nt.ForwardAccumulator([loc, scale], [np.ones(3), np.full(3, 0.5)]) as acc:
            w = gen.logistic(loc, scale) * gen.exponential(scale)
        return (y, z, *grads, acc.jvp(w), gen.binomial(10, p), gen.choice(3, 4, p=p),
                gen.integers(0, high), gen.normal(x32, 1.0, dtype=np.float32),
                gen.permutation(x32))
    return step


def test_replays_take_each_calls_parameters_bit_for_bit_as_eager():
    eager, twin = nt.random.Generator(77), nt.random.Generator(77)
    traced = nt.function(_drawing_with(twin))
    rng = np.random.default_rng(1)
    for _ in range(6):
        p = rng.dirichlet(np.ones(3))
        args = (rng.uniform(0.5, 2.0, 3), rng.uniform(0.5, 2.0, 3), p,
                rng.integers(1, 50, 3), rng.standard_normal(3).astype(np.float32))
        got = traced(*args)
        want = _drawing_with(eager)(*[nt.constant(a) for a in args])
        assert len(got) == len(want) == 10
        for a, b in zip(got, want):
            assert same(a, b)
    assert traced.trace_count == 1 and same(eager.state, twin.state)


def test_a_replay_follows_the_state_when_it_is_changed_from_outside():
    gen = nt.random.Generator(1)
    f = nt.function(lambda x: x + gen.random(3))
    f(np.zeros(3))
    before = gen.state.numpy()
    first = f(np.zeros(3)).numpy()
    gen.state.assign(before)                 # rewound: the same numbers again
    assert np.array_equal(f(np.zeros(3)).numpy(), first)
    twin = copy.deepcopy(gen)
    assert np.array_equal(f(np.zeros(3)).numpy(), twin.random(3).numpy())


def test_recompute_grad_redraws_the_numbers_of_the_first_run():
    gen, twin = nt.random.Generator(4), nt.random.Generator(4)
    x = nt.Variable(np.linspace(0.1, 1.0, 5))

    def f(x, g):
        return np.sum(np.sin(x * g.normal(1.0, 0.5, size=5)))
    with nt.GradientTape() as tape:
        y = nt.recompute_grad(lambda x: f(x, gen))(x)
    with nt.GradientTape() as tape2:
        y2 = f(x, twin)
    assert same(y, y2) and same(tape.gradient(y, x), tape2.gradient(y2, x))
    assert same(gen.state, twin.state)


# copies ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("make", [copy.copy, copy.deepcopy,
                                  lambda g: pickle.loads(pickle.dumps(g))],
                         ids=["copy", "deepcopy", "pickle"])
def test_a_copy_has_its_own_state_and_draws_what_the_original_would(make):
    gen = nt.random.Generator(9)
    gen.random(2)
    twin = make(gen)
    assert twin.state is not gen.state and not twin.state.trainable
    assert same(twin.state, gen.state)
    assert same(twin.normal(size=4), gen.normal(size=4))
    twin.random(1)                      # the copy moves on alone
    assert not same(twin.state, gen.state)
    assert same(make(gen).spawn(1)[0].random(3), gen.spawn(1)[0].random(3))


def test_a_deep_copied_owner_shares_one_copy_of_a_shared_generator():
    gen = nt.random.Generator(0)
    pair = copy.deepcopy([gen, gen])
    assert pair[0] is pair[1] and pair[0] is not gen


# mistakes, said at the user's line ---------------------------------------------------------------
@pytest.mark.parametrize("call, kind, words", [
    (lambda: nt.random.Generator(1.5), TypeError, "whole number"),
    (lambda: nt.random.Generator("42"), TypeError, "whole number"),
    (lambda: nt.random.Generator(True), TypeError, "whole number"),
    (lambda: nt.random.Generator(-1), ValueError, ">= 0"),
    (lambda: nt.random.Generator(0).normal(0.0, -1.0), ValueError, "scale=-1.0"),
    (lambda: nt.random.Generator(0).normal(0.0, nt.constant([1.0, -2.0])), ValueError,
     "smallest -2.0"),
    (lambda: nt.random.Generator(0).exponential(-2.0), ValueError, "scale"),
    (lambda: nt.random.Generator(0).gamma(-1.0), ValueError, "shape"),
    (lambda: nt.random.Generator(0).binomial(3, 1.5), ValueError, "p > 1"),
    (lambda: nt.random.Generator(0).integers(5, 2), ValueError, "low >= high"),
    (lambda: nt.random.Generator(0).random(size=2.5), TypeError, "size"),
    (lambda: nt.random.Generator(0).normal(np.zeros(3), size=(2, 4)), ValueError, "broadcast"),
    (lambda: nt.random.Generator(0).shuffle(nt.constant([1.0, 2.0])), TypeError, "in place"),
    (lambda: nt.random.Generator(0).permutation(2.5), ValueError, "scalar"),
    (lambda: nt.random.Generator(0).spawn(-1), ValueError, "spawn"),
    (lambda: nt.random.Generator(0).poisson(1.0, 2, 3), TypeError, "poisson"),
])
def test_mistakes_are_said_at_the_users_line(call, kind, words):
    with pytest.raises(kind, match=words) as info:
        call()
    assert nbtape_frames(info.value) == []


def test_shuffling_a_numpy_array_inside_nt_function_is_refused_and_a_variable_replays():
    gen = nt.random.Generator(0)
    a = np.arange(5.0)

    @nt.function
    def f(x):
        gen.shuffle(a)
        return x * 2
    with pytest.raises(ValueError, match="in place") as info:
        f(np.ones(2))
    # (raised at the user's line in f: the frames below are nt.function's, as for any error)
    assert not [t for t in nbtape_frames(info.value) if "random" in t.filename]
    assert np.array_equal(a, np.arange(5.0))
    v, w = nt.Variable(np.arange(6.0)), nt.Variable(np.arange(6.0))
    twin = nt.random.Generator(0)
    g = nt.function(lambda: gen.shuffle(v))
    for _ in range(5):
        g()
        twin.shuffle(w)
        assert same(v, w)
    assert g.trace_count == 1


def test_a_bad_parameter_leaves_the_state_as_it_was():
    gen = nt.random.Generator(0)
    before = gen.state.numpy()
    with pytest.raises(ValueError):
        gen.binomial(3, 2.0)
    assert np.array_equal(gen.state.numpy(), before)


def test_the_repr_says_how_far_the_generator_has_drawn():
    gen = nt.random.Generator(0)
    gen.random()
    assert repr(gen) == "nt.random.Generator(Philox, 1 draw so far)"
    gen.random()
    assert repr(gen) == "nt.random.Generator(Philox, 2 draws so far)"
