"""Recording is per thread: a tape only sees the operations of the thread it is open in."""
import threading

import numpy as np

import nbtape as nt


def run_in_thread(fn, *args):
    out = {}

    def target():
        try:
            out["value"] = fn(*args)
        except BaseException as e:      # pragma: no cover - reported below
            out["error"] = e
    t = threading.Thread(target=target)
    t.start()
    t.join(timeout=60)
    assert not t.is_alive(), "worker thread hung"
    if "error" in out:
        raise out["error"]
    return out["value"]


def test_tape_does_not_record_ops_from_another_thread():
    x = nt.constant(3.0)
    with nt.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y_other = run_in_thread(lambda: x * x)       # computed while the tape is open
        y_here = x * 2.0
    assert float(y_other) == 9.0
    assert tape.gradient(y_other, x) is None
    assert float(tape.gradient(y_here, x)) == 2.0


def test_variable_read_in_another_thread_is_not_auto_watched():
    v = nt.Variable(2.0)
    with nt.GradientTape() as tape:
        y = run_in_thread(lambda: v * v)
    assert tape.watched_variables() == ()
    assert tape.gradient(y, v) is None


def test_tape_opened_in_a_thread_is_not_active_in_the_main_thread():
    x = nt.constant(3.0)
    entered = threading.Event()
    release = threading.Event()
    result = {}

    def worker():
        with nt.GradientTape() as tape:
            tape.watch(x)
            entered.set()
            release.wait(30)
            y = x * x
        result["grad"] = tape.gradient(y, x)
        result["tape"] = tape

    t = threading.Thread(target=worker)
    t.start()
    assert entered.wait(30)
    with nt.GradientTape() as mine:       # the main thread's own tape
        mine.watch(x)
        z = x * 5.0                        # must not land on the worker's tape
    release.set()
    t.join(30)
    assert float(result["grad"]) == 6.0
    assert float(mine.gradient(z, x)) == 5.0


def test_two_threads_with_their_own_tapes_interleaved():
    n_steps = 200
    barrier = threading.Barrier(2, timeout=30)
    results = {}

    def worker(name, power, x0):
        x = nt.constant(x0)
        grads = []
        for _ in range(n_steps):
            with nt.GradientTape() as tape:
                tape.watch(x)
                barrier.wait()                 # both threads are inside their tapes now
                y = x ** power
                barrier.wait()
            grads.append(float(tape.gradient(y, x)))
        results[name] = grads

    threads = [threading.Thread(target=worker, args=("cube", 3, 2.0)),
               threading.Thread(target=worker, args=("square", 2, 5.0))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert results["cube"] == [12.0] * n_steps
    assert results["square"] == [10.0] * n_steps


def test_shared_variable_two_threads_each_gets_its_own_gradient():
    w = nt.Variable(np.array([1.0, 2.0]))
    barrier = threading.Barrier(2, timeout=30)
    results = {}

    def worker(name, scale):
        with nt.GradientTape() as tape:
            barrier.wait()
            y = np.sum(w * w) * scale
            barrier.wait()
        results[name] = tape.gradient(y, w).numpy()

    threads = [threading.Thread(target=worker, args=(k, s)) for k, s in (("a", 1.0), ("b", 10.0))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    np.testing.assert_array_equal(results["a"], [2.0, 4.0])
    np.testing.assert_array_equal(results["b"], [20.0, 40.0])


def test_forward_accumulator_is_per_thread():
    x = nt.constant(2.0)
    with nt.ForwardAccumulator(x, 1.0) as acc:
        y = run_in_thread(lambda: x * x)
        z = x * x
    assert acc.jvp(y) is None
    assert float(acc.jvp(z)) == 4.0


def test_nested_tapes_in_a_worker_thread():
    def second_derivative():
        x = nt.Variable(2.0)
        with nt.GradientTape() as outer:
            with nt.GradientTape() as inner:
                y = x ** 3
            g = inner.gradient(y, x)
        return float(outer.gradient(g, x))
    assert run_in_thread(second_derivative) == 12.0
