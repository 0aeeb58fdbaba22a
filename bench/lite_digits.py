"""The digits tutorial's training loop in the JupyterLite site, eager and under ``nt.function``.

    python3 bench/lite_digits.py                    # build the offline site, then measure
    python3 bench/lite_digits.py --site /tmp/site   # reuse a site this script built before
    python3 bench/lite_digits.py --keep /tmp/site   # build into /tmp/site and keep it
    python3 bench/lite_digits.py --epochs 5         # a shorter loop (the tutorial runs 20)

Issue 28 asks for the loop of ``notebooks/12_training_a_network.ipynb`` timed in the
browser with and without ``nt.function``.  This script builds the site with
``lite/build.py`` (through the JupyterLite tests' helpers, ``tests/lite/site.py``),
its only content one generated notebook, serves it on 127.0.0.1, opens it in headless
Chromium with every request that leaves 127.0.0.1 blocked (``tests/lite/page.py``),
and runs the notebook in the Pyodide kernel.  The notebook trains the tutorial's model
(Dense 64 relu, Dense 10, float64, Adam 0.005, batches of 32, seeds 0) twice from the
same start: once eagerly, as the tutorial does, and once with the step wrapped in
``nt.function``.  It reports the median time of a step in each, the calls that traced
(timed on their own, never in the medians) and whether the two runs' losses agree bit
for bit.  The same loop then runs here, natively, for comparison.

Timings depend on the machine and on its load: no test asserts any of them.
"""
import argparse
import json
import pathlib
import shutil
import sys
import tempfile
import time

REPO = pathlib.Path(__file__).resolve().parents[1]
NOTEBOOK = "lite_digits_bench.ipynb"
MARKER = "LITE_DIGITS_BENCH "

# The loop of notebook 12 (its monitor and inspector left out: they draw, which is not
# what is measured), run eagerly and traced from the same seeds.  It runs in the
# browser's kernel and, unchanged, in this Python for the native column.
LOOP = '''
import json, time
import numpy as np
import nbtape as nt

def digits_run(traced, epochs):
    (x_train, y_train), _ = nt.datasets.load_digits(test_fraction=0.2, seed=0, dtype="float64")
    rng = np.random.default_rng(0)
    model = nt.Sequential([
        nt.layers.Dense(64, activation="relu", seed=rng, dtype="float64"),
        nt.layers.Dense(10, seed=rng, dtype="float64"),
    ])
    model.build((None, 64))
    optimizer = nt.optimizers.Adam(learning_rate=0.005)

    def batches(n, batch_size, rng):
        order = rng.permutation(n)
        return [order[k:k + batch_size] for k in range(0, n, batch_size)]

    def train_step(x, y):
        with nt.GradientTape() as tape:
            logits = model(x)
            loss = np.mean(nt.losses.sparse_categorical_crossentropy(y, logits, from_logits=True))
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
        return loss

    step = nt.function(train_step) if traced else train_step
    times, traces, first_calls, losses = [], [], [], []
    for epoch in range(epochs):
        for batch in batches(len(x_train), 32, rng):
            x, y = x_train[batch], y_train[batch]
            before = step.trace_count if traced else 0
            t0 = time.perf_counter()
            loss = step(x, y)
            ms = (time.perf_counter() - t0) * 1e3
            losses.append(float(np.asarray(loss.numpy() if hasattr(loss, "numpy") else loss)))
            if traced and step.trace_count > before:
                traces.append(ms)                 # a tracing call: timed on its own
            elif traced and len(first_calls) < 1 and not traces:
                first_calls.append(ms)            # the eager first call (Adam's slots)
            else:
                times.append(ms)
    return {"times": times, "traces": traces, "first_calls": first_calls,
            "losses": losses, "trace_count": step.trace_count if traced else 0}

def digits_bench(epochs):
    eager = digits_run(False, epochs)
    traced = digits_run(True, epochs)
    e, t = eager["losses"], traced["losses"]
    result = {
        "steps": len(e),
        "eager_ms": float(np.median(eager["times"])),
        "traced_ms": float(np.median(traced["times"])),
        "eager_mean_ms": float(np.mean(eager["times"])),
        "traced_mean_ms": float(np.mean(traced["times"])),
        "trace_ms": traced["traces"],
        "first_eager_call_ms": traced["first_calls"],
        "trace_count": traced["trace_count"],
        "losses_equal": e == t,
        "max_loss_diff": float(np.max(np.abs(np.subtract(e, t)))),
        "final_loss": e[-1],
        "eager_total_s": sum(eager["times"]) / 1e3,
        "traced_total_s": (sum(traced["times"]) + sum(traced["traces"])
                           + sum(traced["first_calls"])) / 1e3,
    }
    result["ratio"] = result["eager_ms"] / result["traced_ms"]
    return result
'''

INSTALL = ("try:\n    import nbtape\nexcept ImportError:\n"
           '    %pip install -q "nbtape[notebook]"\n'
           "import sys\nimport nbtape\nprint('platform:', sys.platform)")


def cells(epochs):
    run = f"print({MARKER!r} + json.dumps(digits_bench({epochs})))"
    return (INSTALL, LOOP, run)


def _helpers():
    # the JupyterLite tests' helpers: tests/ holds the packages ``browser`` and ``lite``
    sys.path.insert(0, str(REPO / "tests"))
    from browser import chromium
    from browser.lab import Notebook
    from browser.notebooks import new_notebook, write
    from browser.shots import Screenshots
    from lite import page, site
    return chromium, Notebook, new_notebook, write, Screenshots, page, site


def measure_in_browser(epochs, site_dir, keep, timeout):
    chromium, Notebook, new_notebook, write, Screenshots, page, site = _helpers()
    work = pathlib.Path(tempfile.mkdtemp(prefix="nbtape-lite-bench-"))
    try:
        if site_dir is None:
            contents = work / "contents"
            contents.mkdir()
            write(contents / NOTEBOOK, new_notebook(*cells(epochs)))
            dest = pathlib.Path(keep) if keep else work / "site"
            started = time.monotonic()
            site_dir, _ = site.build_site(dest, contents)
            print(f"site built in {time.monotonic() - started:.0f} s: {site_dir}", flush=True)
        else:
            site_dir = pathlib.Path(site_dir)
        # the notebook is rewritten each run (epochs may differ); JupyterLite reads
        # its contents from files/ and the listing in api/contents/all.json
        write(site_dir / "files" / NOTEBOOK, new_notebook(*cells(epochs)))
        server = site.StaticServer(site_dir).start()
        home = tempfile.mkdtemp(prefix="nbtape-chromium-", dir=work)
        pw, browser = chromium.launch(chromium.find_chromium(), home)
        try:
            holder = page.LitePage(browser, server, Screenshots(work / "shots").prepare(),
                                   {"width": 1280, "height": 1000})
            pg, console = holder.fresh()
            t0 = time.monotonic()
            nb = Notebook(pg, server, NOTEBOOK, holder.shots, console).open(page.START_TIMEOUT)
            print(f"kernel ready in {time.monotonic() - t0:.0f} s; running the loops", flush=True)
            seconds = page.run_each(nb, timeout=timeout)
            print(f"cells ran in {seconds:.0f} s", flush=True)
            outputs = [o for c in nb.cells() for o in c["outputs"]]
            blocked = list(holder.offline.blocked)
            holder.close()
        finally:
            chromium.close(pw, browser)
            server.stop()
    finally:
        shutil.rmtree(work, ignore_errors=True)
    for o in outputs:
        if o.get("error"):
            raise SystemExit(f"the notebook raised in the browser: {o['error']}")
        for line in (o.get("text") or "").splitlines():
            if line.startswith(MARKER):
                return json.loads(line[len(MARKER):]), blocked
    raise SystemExit("the notebook printed no result; its outputs:\n"
                     + json.dumps(outputs, indent=1)[:3000])


def measure_natively(epochs):
    sys.path.insert(0, str(REPO))
    space = {}
    exec(compile(LOOP, "<digits loop>", "exec"), space)
    return space["digits_bench"](epochs)


def show(where, r):
    trace = ", ".join(f"{ms:.0f}" for ms in r["trace_ms"])
    first = ", ".join(f"{ms:.1f}" for ms in r["first_eager_call_ms"])
    print(f"{where}: {r['steps']} steps; eager {r['eager_ms']:.2f} ms/step, "
          f"nt.function {r['traced_ms']:.2f} ms/step: {r['ratio']:.2f}x faster (medians; "
          f"means {r['eager_mean_ms']:.2f} and {r['traced_mean_ms']:.2f} ms); "
          f"tracing calls {trace} ms ({r['trace_count']} traces: the last batch is "
          f"smaller); eager first call {first} ms; whole loop {r['eager_total_s']:.1f} s "
          f"eager, {r['traced_total_s']:.1f} s traced; losses equal bit for bit: "
          f"{r['losses_equal']} (max difference {r['max_loss_diff']:.3g}, final "
          f"{r['final_loss']:.4f})")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--epochs", type=int, default=20, help="epochs (the tutorial's 20)")
    parser.add_argument("--site", help="a site this script (or the tests) built: reuse it")
    parser.add_argument("--keep", help="build the site into this folder and keep it")
    parser.add_argument("--timeout", type=float, default=900.0, help="seconds for the cells")
    parser.add_argument("--no-native", action="store_true", help="skip the native run")
    parser.add_argument("--json", help="also write the numbers as JSON here")
    args = parser.parse_args(argv)
    result, blocked = measure_in_browser(args.epochs, args.site, args.keep, args.timeout)
    show("JupyterLite (Pyodide, Chromium)", result)
    print(f"requests that tried to leave 127.0.0.1: {len(blocked)}")
    numbers = {"lite": result}
    if not args.no_native:
        native = measure_natively(args.epochs)
        show(f"native (CPython {sys.version.split()[0]})", native)
        numbers["native"] = native
    if args.json:
        pathlib.Path(args.json).write_text(json.dumps(numbers, indent=1))
    ok = result["losses_equal"] and numbers.get("native", result)["losses_equal"]
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
