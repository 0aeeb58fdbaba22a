"""``nt.function`` is right or refuses: the everyday steps that replayed a wrong program.

Each step is traced at one input and replayed at others that differ in what the trace
could have frozen (other positions, other counts, other orders, other objects), and each
replay is compared bit for bit with an eager run at the same inputs; where nbtape cannot
replay a step it must refuse at trace time, naming the user's line.
"""
import random
import types
from collections import namedtuple
from dataclasses import dataclass

import numpy as np
import pytest

import nbtape as nt
from gradcheck.traced import same
from nbtape.transforms.trace import TracingError


def _agree(fn, calls, traces=None):
    """Run ``nt.function(fn)`` on each ``(args, kwargs)`` of ``calls`` and ``fn`` eagerly
    on the same, comparing everything they return bit for bit."""
    traced = nt.function(fn)
    for args, kwargs in calls:
        got = traced(*args, **kwargs)
        want = fn(*args, **kwargs)
        got = got if isinstance(got, tuple) else (got,)
        want = want if isinstance(want, tuple) else (want,)
        for g, w in zip(got, want):
            assert same(g, w), (args, kwargs, g, w)
    if traces is not None:
        assert traced.trace_count == traces
    return traced


def _grad_of(loss):
    def step(x):
        x = nt.constant(x)
        with nt.GradientTape() as tape:
            tape.watch(x)
            y = loss(x)
        return y, tape.gradient(y, x)
    return step


# --- 1. values that choose positions are program values ----------------------------------
def test_a_mask_chooses_positions_in_the_forward_and_backward_pass():
    f = _grad_of(lambda x: np.sum(x[x > 0] ** 2))
    _agree(f, [((np.array([1.0, -1, 2, -2]),), {}), ((np.array([-1.0, 1, -2, 2]),), {}),
               ((np.array([-3.0, 1, -2, 5]),), {})])


def test_a_mask_with_another_count_retraces_never_crashes():
    f = _grad_of(lambda x: np.sum(x[x > 0] ** 2))
    _agree(f, [((np.array([1.0, -1, 2, -2]),), {}), ((np.array([1.0, 2, 3, -2]),), {}),
               ((np.array([-1.0, -2, -3, -2]),), {}), ((np.array([1.0, -1, 2, -2]),), {})])


def test_an_embedding_lookup_sends_each_replays_gradient_to_its_rows():
    E = nt.Variable(np.arange(12.0).reshape(4, 3))

    def step(ids):
        with nt.GradientTape() as tape:
            y = np.sum(E[ids] ** 2)
        return y, tape.gradient(y, E)

    _agree(step, [((np.array([0, 1]),), {}), ((np.array([2, 3]),), {}),
                  ((np.array([3, 3]),), {})], traces=1)


def test_a_variable_used_as_an_index_is_read_at_each_call():
    table = np.linspace(0.0, 1.0, 5)
    t = nt.Variable(0, dtype=np.int64)

    @nt.function
    def step(x):
        y = x * nt.constant(table)[t]
        t.assign_add(1)
        return y

    assert [float(step(np.array(2.0))) for _ in range(3)] == [0.0, 0.5, 1.0]


def test_argmax_chooses_the_forward_value():
    f = _grad_of(lambda x: x[np.argmax(x)] * 2.0)
    _agree(f, [((np.array([1.0, 3, 2]),), {}), ((np.array([5.0, 3, 2]),), {}),
               ((np.array([0.0, 3, 7]),), {})])


@pytest.mark.parametrize("loss", [
    lambda x: np.sum(np.sort(x) * np.arange(3.0)),
    lambda x: np.sum(np.partition(x, 1)[:1] * 3.0),
    lambda x: np.sum(x[np.argsort(x)] * np.arange(3.0)),
], ids=["sort", "partition", "argsort"])
def test_sort_and_partition_replay_each_calls_permutation(loss):
    _agree(_grad_of(loss), [((np.array([1.0, 3, 2]),), {}), ((np.array([5.0, 3, 2]),), {}),
                            ((np.array([2.0, 1, 9]),), {})])


def test_take_along_axis_picks_each_rows_label():
    def step(logits, labels):
        logits = nt.constant(logits)
        with nt.GradientTape() as tape:
            tape.watch(logits)
            picked = np.take_along_axis(logits, labels[:, None], axis=1)
            loss = -np.sum(picked)
        return loss, tape.gradient(loss, logits)

    x = np.arange(6.0).reshape(2, 3)
    _agree(step, [((x, np.array([0, 1])), {}), ((x + 1, np.array([2, 0])), {}),
                  ((x * 2, np.array([1, 1])), {})], traces=1)


@pytest.mark.parametrize("one_hot", [lambda labels: nt.constant(np.eye(5))[labels],
                                     lambda labels: np.take(nt.constant(np.eye(5)), labels,
                                                            axis=0)],
                         ids=["eye-index", "take"])
def test_one_hot_from_labels_is_supported(one_hot):
    w = nt.Variable(np.linspace(-1, 1, 15).reshape(3, 5))

    def step(x, labels):
        with nt.GradientTape() as tape:
            loss = np.sum((x @ w - one_hot(labels)) ** 2)
        return loss, tape.gradient(loss, w)

    x = np.arange(6.0).reshape(2, 3)
    _agree(step, [((x, np.array([0, 4])), {}), ((x, np.array([2, 1])), {}),
                  ((x - 1, np.array([3, 3])), {})], traces=1)


@pytest.mark.parametrize("one_hot, fix", [
    (lambda labels: np.eye(5)[labels], "`nt.constant(np.eye(5))[labels]`"),
    (lambda labels: np.take(np.eye(5), labels, axis=0),
     "`np.take(nt.constant(np.eye(5)), labels, axis=0)`"),
    (lambda labels: np.eye(5)[labels[0]], "`nt.constant(np.eye(5))[labels[0]]`"),
    (lambda labels: np.array([[0.0] * 5, [1.0] * 5, [2.0] * 5])[labels],
     "`nt.constant(np.array([[0.0] * 5, [1.0] * 5, [2.0] * 5]))[labels]`"),
], ids=["eye-index", "take", "0-d-index", "literal-table"])
def test_a_plain_table_indexed_by_labels_is_refused_saying_exactly_what_to_write(one_hot, fix):
    # numpy indexes a plain array with a plain copy of the index, and np.take offers the
    # call to nbtape only for its array: nbtape cannot see the result, so it refuses, and
    # names the user's expression with the table a tensor (tested to replay just above)
    with pytest.raises(TracingError) as info:
        nt.function(lambda x, labels: x * one_hot(labels))(np.ones(5), np.array([1, 2]))
    # (the message quotes the user's line, which here holds the fix as a string too)
    assert f"Instead, write {fix}:" in str(info.value)
    assert "test_function_replays.py" in str(info.value)


@pytest.mark.parametrize("pick", [lambda x: x[np.nonzero(x > 0)],
                                  lambda x: np.unique(x)],
                         ids=["nonzero", "unique"])
def test_a_data_dependent_shape_retraces_or_refuses_never_crashes(pick):
    f = lambda x: np.sum(pick(x) * 2.0)    # noqa: E731
    traced = nt.function(f)
    for x in (np.array([1.0, -1, 2, 2]), np.array([1.0, 3, 4, 5]), np.array([-1.0, -1, 0, 0])):
        try:
            got = traced(x)
        except TracingError as e:
            assert "test_function_replays.py" in str(e)
            continue
        assert same(got, f(x))


@pytest.mark.parametrize("case", ["labels-out-of-range", "index-out-of-range"])
def test_a_replay_whose_numpy_call_raises_says_the_eager_error_variables_untouched(case):
    # (issue 36) labels the traced call's checks would refuse, or an index past the end,
    # raised a raw error from inside the generated program, after some updates
    w = nt.Variable(np.linspace(-1.0, 1.0, 6).reshape(2, 3))
    table = nt.constant(np.arange(12.0).reshape(4, 3))

    def step(x, labels):
        with nt.GradientTape() as tape:
            logits = x @ w
            if case == "labels-out-of-range":
                loss = np.sum(nt.losses.sparse_categorical_crossentropy(
                    labels, logits, from_logits=True))
            else:
                loss = np.sum(logits * table[labels])
        w.assign_sub(0.1 * tape.gradient(loss, w))
        return loss

    traced = nt.function(step)
    x = np.ones((2, 2))
    traced(x, np.array([0, 1]))
    before = w.numpy()
    with pytest.raises(Exception) as got:
        traced(x, np.array([0, 7]))
    np.testing.assert_array_equal(w.numpy(), before)
    with pytest.raises(Exception) as want:
        step(x, np.array([0, 7]))
    assert type(got.value) is type(want.value) and str(got.value) == str(want.value)
    tb, files = got.tb, []
    while tb is not None:
        files.append(tb.tb_frame.f_code.co_filename)
        tb = tb.tb_next
    assert "<nt.function program>" not in files


# --- 2. which array is which ------------------------------------------------------------
def test_keyword_arguments_are_bound_by_name_in_call_order():
    def affine(x, scale, bias):
        return x * scale + bias

    x = np.array([2.0, 3.0])
    _agree(affine, [((x,), dict(scale=np.array([2.0, 2]), bias=np.array([3.0, 3]))),
                    ((x,), dict(scale=np.array([5.0, 7]), bias=np.array([1.0, 0]))),
                    ((x,), dict(bias=np.array([5.0, 7]), scale=np.array([1.0, 0])))])


def test_an_argument_that_is_a_closed_over_array_is_still_an_argument():
    targets = np.array([1.0, 2.0])

    def mse(pred):
        return np.mean((pred - targets) ** 2)

    _agree(mse, [((targets,), {}), ((np.zeros(2),), {}), ((np.array([4.0, 1.0]),), {})])


def test_a_closed_over_array_is_captured_when_traced_as_tensorflow_does():
    scale = np.array([1.0, 2.0])
    f = nt.function(lambda x: np.sum(x * scale))
    assert float(f(np.ones(2))) == 3.0
    scale[:] = 10.0     # changed in place after the trace: the capture keeps its value
    x = nt.constant(np.ones(2))
    assert float(f(np.ones(2))) == 3.0
    with nt.GradientTape() as tape:     # (the backward pass too: never a mix)
        tape.watch(x)
        y = np.sum(x * scale)
    assert float(y) == 20.0


# --- 2b. no array of unknown provenance: every way out of a trace is refused or checked ---
_w = nt.Variable([0.5, -1.5])


@pytest.mark.parametrize("escape", [
    lambda x, n: x * np.asarray(x),
    lambda x, n: x * x.numpy(),
    lambda x, n: x * float(np.sum(x)),                  # float(loss) fed back
    lambda x, n: x[:int(n)],                            # int(n) as a count
    lambda x, n: x * np.ones(3)[:n],                    # n as a plain slice bound
    lambda x, n: x + sum(range(n)),
    lambda x, n: x * x.tolist()[0],
    lambda x, n: x * x[0].item(),
    lambda x, n: x * np.array([x[0], x[1], x[2]]),
    lambda x, n: x * np.fromiter(x, float),
    lambda x, n: x * _w.numpy()[0],                     # a variable's value
    lambda x, n: x * float(_w[0]),
    lambda x, n: x * np.asarray(_w)[1],
], ids=["asarray", "numpy()", "float(loss)", "int(n)-count", "slice-bound", "range(n)",
        "tolist", "item", "array-of-tensors", "fromiter", "variable.numpy()",
        "float(variable)", "asarray(variable)"])
def test_a_value_that_leaves_as_a_python_number_or_plain_array_is_refused_at_its_line(escape):
    with pytest.raises(TracingError) as info:
        nt.function(escape)(np.array([1.0, 2.0, 3.0]), np.array(2))
    assert "test_function_replays.py" in str(info.value)


def test_nbtapes_own_reads_of_a_traced_value_are_refused_too():
    # (issue 36) two reads inside nbtape froze silently: a layer's get_weights() after an
    # update in the step, and an optimizer's learning rate set from a traced value
    layer = nt.layers.Dense(2)
    layer(np.ones((1, 3)))

    def weights(x):
        layer.kernel.assign(np.ones((3, 2)) * x[0])
        return x * layer.get_weights()[0][0, 0]

    opt = nt.optimizers.SGD(0.1)
    v = nt.Variable([1.0, 2.0])

    def rate(x):
        opt.learning_rate = x[0]
        with nt.GradientTape() as tape:
            loss = np.sum(v * x)
        opt.apply_gradients([(tape.gradient(loss, v), v)])
        return loss

    for step in (weights, rate):
        with pytest.raises(TracingError) as info:
            nt.function(step)(np.array([1.0, 2.0]))
        assert "test_function_replays.py" in str(info.value)


# nbtape's own code reads a tensor's value in Python only through a hook the tracer hears
# (value_of, .numpy(), float(), state.program_value), or where the read cannot freeze a
# traced value; each such read of the rules and the training pieces is listed with why
_READS_THAT_CANNOT_FREEZE = {
    ("rules/operators.py", "_index_value"): "an index: the tracer knows its array by identity",
    ("training/class_labels.py", "label_values"):
        "the labels' checks (computed_labels hands the tensor to the computation)",
    ("training/clip.py", "_plain"): "checks of the bounds, and axes (part of the signature)",
    ("training/layers.py", "compute_output_shape"): "a shape",
    ("training/optimizers.py", "_plain"):
        "an eager update's rate, or a schedule's plain number (a traced one stays a tensor)",
    ("training/optimizers.py", "_now"): "a slot outside a trace (inside, a recorded read)",
    ("training/optimizers.py", "learning_rate"):
        "the eager rate (a traced update calls the schedule on the traced iteration count)",
    ("training/random.py", "_raw"): "a parameter's checks (the draw takes the tensor)",
    ("training/random.py", "__repr__"): "a generator's text",
}


def _value_reads(folder):
    import ast
    import pathlib

    root = pathlib.Path(nt.__file__).parent
    found = set()

    class Reads(ast.NodeVisitor):
        def __init__(self, rel):
            self.rel, self.fn = rel, "<module>"

        def visit_FunctionDef(self, node):
            outer, self.fn = self.fn, node.name
            self.generic_visit(node)
            self.fn = outer

        visit_AsyncFunctionDef = visit_FunctionDef

        def visit_Attribute(self, node):
            if node.attr == "_value" and isinstance(node.ctx, ast.Load):
                found.add((self.rel, self.fn))
            self.generic_visit(node)

    for path in sorted((root / folder).rglob("*.py")):
        Reads(path.relative_to(root).as_posix()).visit(ast.parse(path.read_text()))
    return found


def test_nbtapes_own_reads_of_a_value_in_python_are_each_accounted_for():
    # a new read of `._value` in a rule or a training piece could freeze a traced value
    # silently (as get_weights did): go through a hook, or list it here with why not
    found = _value_reads("rules") | _value_reads("training")
    assert found == set(_READS_THAT_CANNOT_FREEZE), (
        sorted(found - set(_READS_THAT_CANNOT_FREEZE)),
        sorted(set(_READS_THAT_CANNOT_FREEZE) - found))


def _from_repr(t):
    # the number a tensor's repr shows, parsed back ("nt.Tensor(6.0, shape=()...")
    return float(repr(t).split("(", 1)[1].split(",", 1)[0])


@pytest.mark.parametrize("escape", [
    lambda x: x * _from_repr(np.sum(x)),
    lambda x: x * float(str(np.max(x)).split("(", 1)[1].split(",", 1)[0]),
    lambda x: x * len(f"{np.sum(x)}"),
    lambda x: x * len(str(_w)),                         # a variable's text
    lambda x: x[:2] * np.array([float(c) for c in str(np.sum(x)) if c.isdigit()][:2]),
], ids=["repr", "str", "f-string-length", "variable-text", "digits-as-array"])
def test_a_value_that_comes_back_from_its_text_is_refused_naming_both_lines(escape):
    # (issue 36) repr/str/print are not refused (a print inside a step is fine): a second
    # trace shows other values there, and a constant that then differs is refused
    with pytest.raises(TracingError, match="shown as text") as info:
        nt.function(escape)(np.array([1.0, 2.0, 3.0]))
    assert str(info.value).count("test_function_replays.py") == 2


def test_printing_a_value_inside_a_step_traces_once_and_replays_right(capsys):
    w = nt.Variable([1.0, 2.0])

    def step(x):
        with nt.GradientTape() as tape:
            loss = np.sum((x * w) ** 2)
        print("loss:", loss)
        print(w)
        w.assign_sub(0.1 * tape.gradient(loss, w))
        return loss

    traced = nt.function(step)
    got = [traced(np.array([1.0, k])) for k in (1.0, 2.0, 3.0)]
    after = w.numpy()
    out = capsys.readouterr().out
    w.assign([1.0, 2.0])
    want = [step(np.array([1.0, k])) for k in (1.0, 2.0, 3.0)]
    assert all(same(g, v) for g, v in zip(got, want)) and same(after, w.numpy())
    assert traced.trace_count == 1 and out.count("loss:") == 1     # the check's is hidden


def test_constants_the_trace_stands_behind_still_trace():
    table = np.linspace(0.0, 1.0, 6).reshape(2, 3)

    def step(x, scale=np.array([2.0, 3.0, 4.0])):
        eye = np.eye(3)
        return np.sum((x @ eye) * scale * table + np.arange(3) * 0.5)

    _agree(step, [((np.ones((2, 3)),), {}), ((np.full((2, 3), 2.0),), {})], traces=1)


# --- 3. frozen without a word -----------------------------------------------------------
def _helper_module():
    """A module that keeps its own generator (the search does not look into modules)."""
    helper = types.ModuleType("helper")
    exec("import numpy as np\n_rng = np.random.default_rng(3)\n"
         "def noise(shape):\n    return _rng.normal(size=shape)\n", helper.__dict__)
    return helper


@pytest.mark.parametrize("draw", [
    lambda x: x + np.random.default_rng().normal(size=x.shape),
    lambda x: x + _helper_module.made.noise(x.shape),
    lambda x: x + random.gauss(0.0, 1.0),
    lambda x: x * np.random.default_rng().normal(),
    lambda x: x[np.array(random.sample(range(x.shape[0]), 2))],
], ids=["default_rng-inside", "helper-generator", "random.gauss", "scalar-draw",
        "random.sample"])
def test_draws_nbtape_cannot_record_are_refused_at_their_line(draw):
    _helper_module.made = _helper_module()
    # 1,000 elements: two traces that draw the same numbers by chance (1 in 12 for a
    # sample of 2 of 4) are told apart by Python's random state alone, which names no line
    with pytest.raises(TracingError) as info:
        nt.function(draw)(np.arange(1000.0))
    msg = str(info.value)
    assert "test_function_replays.py" in msg and "random" in msg


def test_a_python_random_draw_that_repeats_in_both_traces_is_refused_naming_its_lines():
    # (issue 36) randrange(1) draws (the state moves) but gives 0 in both traces, so no
    # constant differs: a third trace watches the state and names the lines around it
    def step(x):
        y = x * 2.0
        k = random.randrange(1)
        return y + k

    with pytest.raises(TracingError) as info:
        nt.function(step)(np.arange(3.0))
    msg = str(info.value)
    assert "Python's random module" in msg and "drawn between line" in msg
    assert "(`y = x * 2.0`)" in msg and "(`return y + k`)" in msg


def test_a_zero_argument_learning_rate_that_changes_is_followed():
    rate = {"now": 0.1}
    w = nt.Variable(np.ones(2))
    opt = nt.optimizers.SGD(learning_rate=lambda: rate["now"])

    @nt.function
    def step(x):
        with nt.GradientTape() as tape:
            loss = np.sum((x * w) ** 2)
        opt.apply_gradients([(tape.gradient(loss, w), w)])
        return loss

    step(np.ones(2))
    rate["now"] = 0.5
    before = w.numpy()
    step(np.ones(2))
    assert np.array_equal(w.numpy(), before - 0.5 * 2 * before)


def test_a_numpy_error_caught_by_the_users_code_is_refused():
    def f(a):
        try:
            L = np.linalg.cholesky(a)
        except np.linalg.LinAlgError:
            L = np.linalg.cholesky(a + 10.0 * np.eye(2))
        return np.sum(L)

    with pytest.raises(TracingError) as info:
        nt.function(f)(np.array([[1.0, 2.0], [2.0, 1.0]]))
    assert "L = np.linalg.cholesky(a)" in str(info.value)


# --- 4. parity and words ----------------------------------------------------------------
@pytest.mark.parametrize("make", [
    lambda lr: nt.optimizers.SGD(learning_rate=lr),
    lambda lr: nt.optimizers.SGD(learning_rate=lr, momentum=0.9),
    lambda lr: nt.optimizers.RMSprop(learning_rate=lr),
    lambda lr: nt.optimizers.Adam(learning_rate=lr),
], ids=["sgd", "momentum", "rmsprop", "adam"])
def test_a_float32_schedule_updates_as_eager_bit_for_bit(make):
    def run(traced):
        w = nt.Variable(np.linspace(0.3, 1.7, 5).astype(np.float32))
        opt = make(lambda step: 0.1 / (1.0 + 0.3 * step))

        def step(x):
            with nt.GradientTape() as tape:
                loss = np.sum((x * w) ** 2)
            opt.apply_gradients([(tape.gradient(loss, w), w)])
            return loss

        step = nt.function(step) if traced else step
        for k in range(4):
            step(np.full(5, 0.7 + k, dtype=np.float32))
        return w.numpy()

    assert same(run(True), run(False))


def test_a_nan_in_a_replay_is_warned_as_eagerly():
    step = _grad_of(lambda x: np.sum(np.sqrt(x)))
    f = nt.function(step)
    f(np.array([1.0, 4.0]))
    with pytest.warns(RuntimeWarning) as eager:
        want = step(np.array([-1.0, 4.0]))
    with pytest.warns(RuntimeWarning) as replayed:
        got = f(np.array([-1.0, 4.0]))
    # (numpy's own warning from the program comes first: the replay stopped there)
    said = [(str(w.message), w.filename) for w in replayed]
    assert all((str(w.message), w.filename) in said for w in eager)
    assert any("born in the backward pass at np.sqrt" in m for m, _ in said)
    assert all(same(g, w) for g, w in zip(got, want)) and f.trace_count == 1


def test_program_before_the_first_call_of_a_step_that_builds_its_model():
    model = nt.Sequential([nt.layers.Dense(2)])

    @nt.function
    def step(x):
        with nt.GradientTape() as tape:
            loss = np.sum(model(x) ** 2)
        return loss, tape.gradient(loss, model.trainable_variables)

    text = str(step.program(np.ones((3, 4))))
    assert "np.matmul" in text and "backward pass" in text


# --- 5. signatures, against tf.function's documented rules --------------------------------
Pair = namedtuple("Pair", "x y")


@dataclass(frozen=True)
class Batch:
    x: np.ndarray
    y: np.ndarray


@pytest.mark.parametrize("make", [Pair, Batch], ids=["namedtuple", "dataclass"])
def test_a_structured_argument_is_keyed_by_its_structure_and_values_replayed(make):
    f = lambda b: np.sum((b.x - b.y) ** 2)     # noqa: E731
    _agree(f, [((make(np.ones(2), np.zeros(2)),), {}),
               ((make(np.arange(2.0), np.ones(2)),), {}),
               ((make(np.array([3.0, 1]), np.array([0.5, 2])),), {})], traces=1)


def test_positional_keyword_and_default_calls_share_one_trace():
    seen = []

    def f(x, y, scale=2.0):
        seen.append(1)
        return (x - y) * scale

    x, y = np.ones(2), np.arange(2.0)
    traced = _agree(f, [((x, y), {}), ((x,), dict(y=y + 1)), ((), dict(y=y, x=x + 2)),
                        ((x, y, 2.0), {})])
    assert traced.trace_count == 1 and len(seen) == 1 + 4     # the trace, the eager runs


def test_a_dicts_key_order_does_not_retrace():
    f = lambda d: d["a"] * 2.0 - d["b"]        # noqa: E731
    _agree(f, [(({"a": np.ones(2), "b": np.zeros(2)},), {}),
               (({"b": np.ones(2), "a": np.arange(2.0)},), {})], traces=1)


def test_a_decorated_method_counts_traces_per_instance():
    class Model:
        def __init__(self, k):
            self.w = nt.Variable(float(k))

        @nt.function
        def __call__(self, x):
            return self.w * x

    a, b = Model(2), Model(3)
    assert float(a(np.array(2.0))) == 4.0 and float(b(np.array(2.0))) == 6.0
    assert float(a(np.array(5.0))) == 10.0
    assert a.__call__.experimental_get_tracing_count() == 1
    assert b.__call__.experimental_get_tracing_count() == 1


def test_a_step_that_creates_a_variable_on_every_call_raises():
    @nt.function
    def f(x):
        v = nt.Variable(np.ones(2))
        return x * v

    f(np.ones(2))           # the first call may build (a model's weights)
    with pytest.raises(ValueError, match="creates a new nt.Variable"):
        f(np.ones(2))


def test_under_an_outer_tape_the_step_runs_eagerly_side_effects_included():
    seen = []

    @nt.function
    def f(x):
        seen.append(1)
        return np.sin(x)

    x = nt.Variable(0.5)
    with nt.GradientTape() as tape:
        y = f(x)
    assert float(tape.gradient(y, x)) == pytest.approx(np.cos(0.5))
    f(np.array(0.1))
    f(np.array(0.2))
    assert len(seen) == 2    # the eager call under the tape, and the one trace


# --- 7. memory ---------------------------------------------------------------------------
def test_a_replay_frees_each_value_after_its_last_use():
    import tracemalloc
    w = nt.Variable(np.linspace(0.1, 1.0, 200_000))

    def step(x):
        with nt.GradientTape() as tape:
            y = x * w
            for _ in range(20):
                y = np.sin(y) * 1.001
            loss = np.sum(y)
        w.assign_sub(1e-3 * tape.gradient(loss, w))
        return loss

    def peak(fn, x):
        tracemalloc.start()
        try:
            fn(x)
            return tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()

    traced = nt.function(step)
    x = np.full(200_000, 0.5)
    traced(x)
    eager, replay = peak(step, x + 1.0), peak(traced, x + 2.0)
    assert replay <= eager, (replay / 1e6, eager / 1e6)
