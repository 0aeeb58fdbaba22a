"""Timing on a shared, noisy machine.

Other processes steal the CPU at random, which only ever makes a run slower.  So:

* the implementations being compared run interleaved (A B C, A B C, ...), so a
  slow spell hits all of them rather than one;
* the headline figure is the best (minimum) of the repeats, which is the least
  disturbed run; the median is kept as well, and ``spread`` = median/best - 1
  says how noisy a measurement was (a few % is quiet; tens of % is a busy machine);
* ratios are only ever taken between figures measured in the same interleaved run.

The clock is this process's CPU time (``time.process_time``) when everything runs on
one thread (``run.py --threads 1``, the default): time the process spent descheduled
while other jobs ran is then not counted, which on a loaded machine removes most of
the noise (a 2,000-op chain measured at load 5 on 2 cores: best wall 25.7 us/op, best
CPU 8.8 us/op; quiet-machine wall about 7).  With several BLAS threads CPU time would
add up the threads, so ``use_wall_clock()`` switches back to ``perf_counter``.

The garbage collector stays on (unlike ``timeit``): a tape allocates many small
objects, and the collections they trigger are part of what a user pays.  A
``gc.collect()`` before every sample keeps one sample's garbage off the next.
"""
import gc
import statistics
import time

_clock = time.process_time


def clock():
    """Seconds on the benchmark's clock (CPU time by default; see the module docstring)."""
    return _clock()


def use_wall_clock():
    global _clock
    _clock = time.perf_counter


def clock_name():
    return "wall" if _clock is time.perf_counter else "cpu"


class Stat:
    """Repeated measurements of one quantity (seconds, or any unit)."""

    def __init__(self, samples=()):
        self.samples = list(samples)

    def add(self, x):
        self.samples.append(x)

    @property
    def best(self):
        return min(self.samples)

    @property
    def median(self):
        return statistics.median(self.samples)

    @property
    def spread(self):
        b = self.best
        return self.median / b - 1.0 if b > 0 else 0.0

    def scaled(self, factor):
        return Stat(x * factor for x in self.samples)

    def to_json(self):
        return {"best": self.best, "median": self.median, "spread": self.spread,
                "n": len(self.samples)}


class Timed:
    """What a callable returns when it timed its own phases (e.g. record vs backward)."""

    __slots__ = ("timings", "result")

    def __init__(self, timings, result=None):
        self.timings, self.result = timings, result


def interleaved(fns, repeat, warmup=1):
    """Run each of ``fns`` (name -> zero-argument callable) ``repeat`` times, round-robin.

    A callable that returns a ``Timed`` supplies its own timings (``{"total": s,
    "record": s, ...}``); otherwise its wall time is the ``"total"``.  Returns
    ``{name: {key: Stat}}`` and ``{name: result of the last call}``.
    """
    stats = {name: {} for name in fns}
    results = {}
    for _ in range(warmup):
        for fn in fns.values():
            fn()
    for _ in range(repeat):
        for name, fn in fns.items():
            gc.collect()
            t0 = _clock()
            out = fn()
            elapsed = _clock() - t0
            if isinstance(out, Timed):
                timings, results[name] = out.timings, out.result
            else:
                timings, results[name] = {"total": elapsed}, out
            for key, value in timings.items():
                stats[name].setdefault(key, Stat()).add(value)
    return stats, results


def in_a_row(step, k):
    """``step`` run ``k`` times back to back as one sample, timed per call: a training
    loop's steady state.  A single 2 ms step timed alone, just after ``gc.collect()``
    and the other columns' steps, starts with cold caches, which costs the
    Python-heavy columns most and made (b) swing by tens of % from run to run."""
    def run():
        t0 = _clock()
        for _ in range(k - 1):
            step()
        out = step()
        return Timed({"total": (_clock() - t0) / k}, out)
    return run


def without_gc(fn):
    """``fn`` run with the cyclic garbage collector off: a diagnostic for how much of a
    time is collections (a tape keeps many container objects alive, and every full
    collection walks all of them)."""
    def run():
        gc.disable()
        try:
            return fn()
        finally:
            gc.enable()
    return run
