"""``nt.coverage()``: which numpy functions and ufuncs nbtape can differentiate.

The table is computed on every call from two sources and nothing else: numpy's
own lists (every ``np.ufunc`` in the numpy namespace, and every function numpy
lets ``__array_function__`` override, which includes ``np.linalg``, ``np.fft``
and ``np.emath``) and nbtape's rule registry.  A rule registered a moment ago
shows up at once; nothing here is kept by hand.

Each row says whether the reverse mode (``GradientTape``) and the forward mode
(``ForwardAccumulator``) can carry a gradient through the function:

* ``"yes"``: a rule for that mode exists;
* ``"via VJP"`` (forward only): no JVP rule, but the engine derives the JVP by
  transposing the VJP (slower, same numbers);
* ``"zero"``: piecewise constant, the gradient is zero (``floor``, ``sign``);
* ``"none"``: the output is a constant that tapes do not follow (``isnan``);
* ``"no"``: no rule, a gradient through it raises ``NoGradientRuleError``.

and a status: ``"differentiable"``, ``"non-differentiable"`` (zero or None
gradient, on purpose) or ``"unsupported"``.

numpy's helpers for string and record dtypes (``np.strings``, ``np.char``,
``numpy.lib.recfunctions``) are left out: those dtypes never carry gradients.
So that the table does not depend on what happens to be imported, the numeric
submodules (``np.fft``, ``np.linalg``, ``np.polynomial``) are imported first.
"""
import html
import sys
import textwrap
from typing import NamedTuple

import numpy as np

from ..rules import load_late
from ..core.registry import RULES
from . import palette

STATUSES = ("differentiable", "non-differentiable", "unsupported")
KINDS = ("ufunc", "function", "ufunc method", "nbtape")
_SKIP_MODULES = ("numpy.lib.recfunctions", "numpy.strings", "numpy.char",
                 "numpy._core.strings", "numpy._core.defchararray")


class Row(NamedTuple):
    """One numpy function (or ufunc, or ufunc method) and what nbtape can do with it."""
    name: str
    kind: str
    reverse: str
    forward: str
    status: str


def _modes(rule):
    """``(reverse, forward, status)`` for a registry entry (``None``: no entry)."""
    if rule is None:
        return "no", "no", "unsupported"
    if rule.nondiff or rule.stop:
        return "none", "none", "non-differentiable"
    if rule.zero:
        return "zero", "zero", "non-differentiable"
    reverse = "yes" if rule.has_vjp else "no"
    if rule.has_jvp:
        forward = "yes"
    elif rule.has_vjp and not rule.multi:
        forward = "via VJP"       # forward.jvp_from_vjp transposes single-output VJPs
    else:
        forward = "no"
    ok = reverse == "yes" or forward == "yes"
    return reverse, forward, "differentiable" if ok else "unsupported"


def _namespaces():
    """numpy module name -> the public spelling users type (numpy.lib.scimath -> np.emath)."""
    names = {"numpy": "np"}
    # vars, not dir + getattr: numpy loads some submodules lazily on attribute access
    for attr, mod in list(vars(np).items()):
        if type(mod) is type(np) and mod.__name__.startswith("numpy.") \
                and mod.__name__ not in names and not attr.startswith("_"):
            names[mod.__name__] = "np." + attr
    return names


def _public_name(fn, spaces):
    mod = getattr(fn, "__module__", None) or "numpy"
    prefix = spaces.get(mod) or ("np." + mod[len("numpy."):] if mod.startswith("numpy.")
                                 else mod)
    return f"{prefix}.{fn.__name__}"


def _numpy_entries():
    """``{name: (kind, [objects])}`` from numpy's own lists of ufuncs and overridable functions."""
    # numpy lists a module's functions once the module is imported
    import numpy.fft  # noqa: F401
    import numpy.linalg  # noqa: F401
    import numpy.polynomial  # noqa: F401
    from numpy.testing.overrides import get_overridable_numpy_array_functions

    spaces = _namespaces()
    entries = {}
    for obj in vars(np).values():
        if isinstance(obj, np.ufunc):
            entries.setdefault("np." + obj.__name__, ("ufunc", []))[1].append(obj)
    for fn in get_overridable_numpy_array_functions():
        if getattr(fn, "__module__", "") in _SKIP_MODULES or fn.__name__.startswith("_"):
            continue
        name = _public_name(fn, spaces)
        # several functions come twice (the public one and its like= dispatcher): one row
        objs = entries.setdefault(name, ("function", []))[1]
        if fn not in objs:
            objs.append(fn)
    return entries


def _registry_kind(key):
    if isinstance(key, tuple):
        return "ufunc method"
    if isinstance(key, np.ufunc):
        return "ufunc"
    mod = getattr(key, "__module__", None) or ""
    return "function" if mod == "numpy" or mod.startswith("numpy.") else "nbtape"


def _build_rows():
    load_late(force=True)       # scipy.special's rules, where scipy is installed
    entries = _numpy_entries()
    rows, covered = [], set()
    for name, (kind, objs) in entries.items():
        rule = next((RULES[o] for o in objs if o in RULES), None)
        covered.update(id(o) for o in objs)
        rows.append(Row(name, kind, *_modes(rule)))
    names = set(entries)
    for key, rule in list(RULES.items()):
        if id(key) in covered:
            continue
        name = rule.name
        if name in names:           # e.g. np.linalg.outer vs np.outer under one spelling
            name = f"{name} ({_registry_kind(key)})"
        names.add(name)
        rows.append(Row(name, _registry_kind(key), *_modes(rule)))
    return sorted(rows, key=lambda r: (KINDS.index(r.kind), r.name))


_GROUPS = {"ufunc": "ufuncs", "ufunc method": "ufunc methods",
           "nbtape": "nbtape's own primitives"}


def _group(row):
    """Display group: ufuncs, ufunc methods, numpy functions by namespace, nbtape's own."""
    if row.kind != "function":
        return _GROUPS[row.kind]
    head = row.name.rsplit(".", 1)[0]
    return "functions" if head == "np" else head


class Coverage:
    """The coverage table: ``.rows``, counts by ``.summary()``, text and HTML views.

    >>> import nbtape as nt
    >>> table = nt.coverage()
    >>> table["np.tanh"].status, table["np.tanh"].forward
    ('differentiable', 'yes')
    >>> table["np.isnan"].reverse
    'none'
    >>> sorted(table.summary()) == sorted(STATUSES)
    True
    """

    def __init__(self, rows, title="numpy"):
        self.rows = tuple(rows)
        self.title = title

    def __len__(self):
        return len(self.rows)

    def __iter__(self):
        return iter(self.rows)

    def __contains__(self, name):
        return any(r.name == name for r in self.rows)

    def __getitem__(self, name):
        for r in self.rows:
            if r.name == name:
                return r
        raise KeyError(f"{name!r} is not in this coverage table; names are spelled as "
                       "users type them, e.g. 'np.sin', 'np.linalg.inv', 'np.add.reduce'.")

    def summary(self):
        """Rows per status, e.g. ``{'differentiable': 250, ...}`` (every status present).

        >>> import nbtape as nt
        >>> nt.coverage("np.sin").summary()["differentiable"] >= 1
        True
        """
        out = dict.fromkeys(STATUSES, 0)
        for r in self.rows:
            out[r.status] += 1
        return out

    def by_kind(self):
        """``{kind: {status: count}}`` for the kinds present.

        >>> import nbtape as nt
        >>> nt.coverage(kind="ufunc").by_kind()["ufunc"]["differentiable"] > 40
        True
        """
        out = {}
        for r in self.rows:
            out.setdefault(r.kind, dict.fromkeys(STATUSES, 0))[r.status] += 1
        return out

    def filter(self, query=None, *, status=None, kind=None, forward=None, reverse=None):
        """The rows whose name contains ``query`` and whose fields equal the others given.

        >>> import nbtape as nt
        >>> [r.name for r in nt.coverage().filter("arctan2")]
        ['np.arctan2']
        """
        _check_choice("status", status, STATUSES)
        _check_choice("kind", kind, KINDS)
        q = query.lower() if query else None
        rows = [r for r in self.rows
                if (q is None or q in r.name.lower())
                and (status is None or r.status == status)
                and (kind is None or r.kind == kind)
                and (forward is None or r.forward == forward)
                and (reverse is None or r.reverse == reverse)]
        parts = [p for p in (query and repr(query), status, kind,
                             forward and f"forward={forward}",
                             reverse and f"reverse={reverse}") if p]
        return Coverage(rows, self.title + (" matching " + ", ".join(parts) if parts else ""))

    # --- views --------------------------------------------------------------------------
    def _groups(self):
        groups = {}
        for r in self.rows:
            groups.setdefault(_group(r), []).append(r)
        return groups

    def __str__(self):
        counts = self.summary()
        diff = [r for r in self.rows if r.status == "differentiable"]
        lines = [f"nbtape coverage of {self.title}: {len(self.rows)} entries",
                 f"  differentiable      {counts['differentiable']:4d}  (reverse mode "
                 f"{sum(r.reverse == 'yes' for r in diff)}, forward mode "
                 f"{sum(r.forward in ('yes', 'via VJP') for r in diff)}, of which "
                 f"{sum(r.forward == 'via VJP' for r in diff)} via VJP)",
                 f"  non-differentiable  {counts['non-differentiable']:4d}  (zero or None "
                 "gradient on purpose)",
                 f"  unsupported         {counts['unsupported']:4d}  (no rule: a gradient "
                 "through them raises)",
                 "  names marked * run forward mode via the VJP; marked ! one mode only", ""]
        for group, rows in self._groups().items():
            c = Coverage(rows).summary()
            lines.append(f"{group} ({len(rows)}): " + ", ".join(
                f"{c[s]} {s}" for s in STATUSES if c[s]))
            for s in STATUSES:
                names = [_marked(r) for r in rows if r.status == s]
                if names:
                    lines.extend(textwrap.wrap(", ".join(names), 92,
                                               initial_indent=f"  {s}: ",
                                               subsequent_indent="      "))
            lines.append("")
        return "\n".join(lines).rstrip() + "\n"

    def __repr__(self):
        c = self.summary()
        return (f"<nbtape coverage of {self.title}: " + ", ".join(
            f"{c[s]} {s}" for s in STATUSES) + ">")

    def _repr_html_(self):
        c = self.summary()
        head = (f"<p><b>nbtape coverage of {html.escape(self.title)}</b>: "
                f"{len(self.rows)} entries, " + ", ".join(
                    f"<span style='color:{_COLOURS[s]}'>{c[s]} {s}</span>"
                    for s in STATUSES) + "</p>")
        parts = [head]
        for group, rows in self._groups().items():
            gc = Coverage(rows).summary()
            body = "".join(
                f"<tr><td><code>{html.escape(r.name)}</code></td><td>{r.kind}</td>"
                f"<td>{r.reverse}</td><td>{r.forward}</td>"
                f"<td style='color:{_COLOURS[r.status]}'>{r.status}</td></tr>" for r in rows)
            parts.append(
                f"<details><summary>{html.escape(group)} ({len(rows)}: "
                + ", ".join(f"{gc[s]} {s}" for s in STATUSES if gc[s]) + ")</summary>"
                "<table><tr><th>name</th><th>kind</th><th>reverse</th><th>forward</th>"
                f"<th>status</th></tr>{body}</table></details>")
        return "\n".join(parts)


# the palette's verdict colours (colour-blind safe; the status is also written out)
_COLOURS = {"differentiable": palette.GOOD_TEXT, "non-differentiable": palette.WARN_TEXT,
            "unsupported": palette.BAD_TEXT}


def _marked(row):
    if row.status != "differentiable":
        return row.name
    if row.forward == "via VJP":
        return row.name + "*"
    if row.reverse != "yes" or row.forward == "no":
        return row.name + "!"
    return row.name


def _check_choice(what, value, choices):
    if value is not None and value not in choices:
        raise ValueError(f"coverage {what}={value!r} is not one of {', '.join(choices)}; "
                         f"pick one of those (or leave {what} out to see every row).")


def coverage(query=None, *, status=None, kind=None, forward=None, reverse=None):
    """The table of numpy functions and ufuncs against nbtape's gradient rules.

    ``query`` keeps the rows whose name contains it (``"linalg"``, ``"np.fft"``,
    ``"cum"``); ``status``, ``kind``, ``forward`` and ``reverse`` keep the rows
    with that value.  The table is rebuilt from the registry on every call.

    >>> import nbtape as nt
    >>> nt.coverage("np.floor")["np.floor"]
    Row(name='np.floor', kind='ufunc', reverse='zero', forward='zero', status='non-differentiable')
    >>> all(r.name.startswith("np.linalg.") for r in nt.coverage("linalg"))
    True
    """
    return Coverage(_build_rows()).filter(query, status=status, kind=kind, forward=forward,
                                          reverse=reverse)


if __name__ == "__main__":     # python -m nbtape.display.coverage prints the table
    sys.stdout.write(str(coverage()))
