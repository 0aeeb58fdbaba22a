"""Mutation testing with cosmic-ray: plant small bugs one at a time, see whether a test fails.

Run by hand (never in CI: a full pass is hours of test runs), from the repository root:

    python3 -m pip install -e ".[test,mutation]"
    python3 tests/mutation.py                                 # every target, every mutant
    python3 tests/mutation.py --sample 25 nbtape/tape/backward.py  # 25 random mutants of one module

The targets (the rule table, the reverse and forward passes, the tape) and the tests that
should kill each one's mutants are ``[tool.cosmic-ray.targets]`` in ``pyproject.toml``; the
rest of ``[tool.cosmic-ray]`` is cosmic-ray's own configuration (timeout, test command,
operator filters).  cosmic-ray edits the module in place while it runs, so this script
works on a copy of the checkout (``--workdir``, default a temporary directory) and leaves
the checkout alone.  It prints the score (killed / (killed + survived)) and the diff of
every survivor; each survivor wants a test that kills it, or a note saying why it is
equivalent (changes nothing a user can observe).  ``cr-report <workdir>/<module>.sqlite``
gives cosmic-ray's own report afterwards.
"""
import argparse
import os
import random
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

try:
    import tomllib
except ImportError:         # Python 3.10: cosmic-ray brings the toml package
    import toml as tomllib

ROOT = Path(__file__).resolve().parent.parent


def _settings():
    text = (ROOT / "pyproject.toml").read_text()
    cfg = tomllib.loads(text)["tool"]["cosmic-ray"]
    targets = cfg.pop("targets")
    return cfg, targets


def _toml(value):
    if isinstance(value, dict):
        return "{" + ", ".join(f'"{k}" = {_toml(v)}' for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(_toml(v) for v in value) + "]"
    if isinstance(value, str):
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    return repr(value)


def _config_file(work, cfg, module, tests):
    """cosmic-ray reads a file whose top-level table is [cosmic-ray]: write one per target."""
    own = dict(cfg, **{"module-path": module,
                       "test-command": cfg["test-command"].format(python=sys.executable,
                                                                  tests=" ".join(tests))})
    filters = own.pop("filters", {})
    lines = ["[cosmic-ray]"] + [f'"{k}" = {_toml(v)}' for k, v in own.items()]
    for name, table in filters.items():
        lines.append(f'[cosmic-ray.filters."{name}"]')
        lines += [f'"{k}" = {_toml(v)}' for k, v in table.items()]
    path = work / (Path(module).stem + ".toml")
    path.write_text("\n".join(lines) + "\n")
    return path


def _copy_checkout(work):
    ignore = shutil.ignore_patterns(".git", "__pycache__", "*.sqlite", ".ipynb_checkpoints")
    for entry in ("nbtape", "tests", "pyproject.toml"):
        src, dst = ROOT / entry, work / entry
        if src.is_dir():
            shutil.copytree(src, dst, ignore=ignore, dirs_exist_ok=True)
        else:
            shutil.copy2(src, dst)


def _tool(name):
    """A cosmic-ray command from the environment running this script."""
    here = Path(sys.executable).parent / name
    return str(here) if here.exists() else (shutil.which(name) or name)


def _run(cmd, work, **kw):
    env = dict(os.environ, PYTHONPATH=str(work))
    return subprocess.run([_tool(cmd[0])] + cmd[1:], cwd=work, env=env, **kw)


def _sample(session, n, seed):
    """Mark all but ``n`` random pending mutants as skipped (a time-boxed run)."""
    from cosmic_ray.work_db import WorkDB, use_db
    from cosmic_ray.work_item import WorkerOutcome, WorkResult
    with use_db(str(session), WorkDB.Mode.open) as db:
        def where(w):       # job ids are random: order by the mutation, so a seed repeats
            m = w.mutations[0]
            return m.module_path, m.operator_name, m.occurrence
        pending = sorted(db.pending_work_items, key=where)
        keep = set(w.job_id for w in random.Random(seed).sample(pending, min(n, len(pending))))
        for w in pending:
            if w.job_id not in keep:
                db.set_result(w.job_id, WorkResult(worker_outcome=WorkerOutcome.SKIPPED))


def _report(session):
    from cosmic_ray.work_db import WorkDB, use_db
    from cosmic_ray.work_item import TestOutcome
    killed, survivors, other = 0, [], 0
    with use_db(str(session), WorkDB.Mode.open) as db:
        for item, result in db.completed_work_items:
            if result.test_outcome == TestOutcome.SURVIVED:
                survivors.append((item, result))
            elif result.test_outcome in (TestOutcome.KILLED, TestOutcome.INCOMPETENT):
                killed += 1
            else:
                other += 1      # skipped by the sample or the operator filter
    tested = killed + len(survivors)
    score = killed / tested if tested else float("nan")
    print(f"{session.stem}: {killed} killed, {len(survivors)} survived of {tested} tested "
          f"(score {score:.0%}; {other} skipped)")
    for item, result in survivors:
        m = item.mutations[0]
        print(f"\n--- survivor: {m.operator_name} at {m.module_path}:{m.start_pos[0]}")
        print(result.diff)
    return killed, len(survivors)


def main(argv=None):
    cfg, targets = _settings()
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("modules", nargs="*", help=f"targets to mutate (default: all: {list(targets)})")
    p.add_argument("--sample", type=int, help="test this many random mutants per module")
    p.add_argument("--seed", type=int, default=0, help="which random sample (default 0)")
    p.add_argument("--workdir", type=Path, help="where the copy and the sessions go")
    args = p.parse_args(argv)
    modules = args.modules or list(targets)
    unknown = [m for m in modules if m not in targets]
    if unknown:
        p.error(f"no tests configured for {unknown} in [tool.cosmic-ray.targets]")
    work = args.workdir or Path(tempfile.mkdtemp(prefix="nbtape-mutation-"))
    work.mkdir(parents=True, exist_ok=True)
    _copy_checkout(work)
    print(f"working in {work}")
    totals = [0, 0]
    for module in modules:
        config = _config_file(work, cfg, module, targets[module])
        session = work / (Path(module).stem + ".sqlite")
        session.unlink(missing_ok=True)
        _run(["cosmic-ray", "baseline", str(config)], work, check=True)   # tests pass unmutated
        _run(["cosmic-ray", "init", str(config), str(session)], work, check=True)
        _run(["cr-filter-operators", str(session), str(config)], work, check=True)
        if args.sample:
            _sample(session, args.sample, args.seed)
        _run(["cosmic-ray", "exec", str(config), str(session)], work, check=True)
        k, s = _report(session)
        totals[0] += k
        totals[1] += s
    if len(modules) > 1:
        print(f"\nall: {totals[0]} killed, {totals[1]} survived")


if __name__ == "__main__":
    main()
