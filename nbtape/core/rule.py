"""What nbtape knows about differentiating one function: a ``Rule``, and the kinds of
operand layout it can have.  The registry (``registry.py``) makes and registers rules;
only it and a rule's own constructor set a rule's fields (``tests/test_architecture.py``
checks the source), and the fields derived from others are recomputed whenever one
of those is set, so no cache can go stale.
"""
import enum

import numpy as np

from .signature import signature_of


class Kind(str, enum.Enum):
    """How a function's arguments map to differentiable operands.  (A ``str`` too, so
    code that compares a kind with its name, ``rule.kind == "positional"``, still works;
    nbtape's own code compares members with ``is``.)

    >>> Kind.VARARGS is VARARGS, Kind.VARARGS == "varargs"
    (True, True)
    """
    POSITIONAL = "positional"   # the first ``nargs`` arguments (np.sin(x), np.diff(a, ..))
    SEQUENCE = "sequence"       # the items of the first argument (np.stack([a, b]))
    VARARGS = "varargs"         # every argument from ``start`` on (np.einsum(s, a, b))


# the kinds by name, for the engine's ``rule.kind is POSITIONAL`` tests
POSITIONAL, SEQUENCE, VARARGS = Kind.POSITIONAL, Kind.SEQUENCE, Kind.VARARGS


class Rule:
    """Everything nbtape knows about differentiating one numpy function."""

    __slots__ = ("fn", "name", "vjps", "jvps", "kind", "start", "save", "save_ans",
                 "nondiff", "multi", "stop", "vjp_all", "jvp_all", "zero", "nargs", "save_all",
                 "compute", "kwvjps", "kwjvps", "_sig", "_given_sig", "variants", "choose",
                 "base", "several", "refused", "fast", "operand_names", "composite")

    def __init__(self, fn, name=None, *, kind=POSITIONAL, start=0, multi=False, nargs=0,
                 vjp_all=None, jvp_all=None, signature=None, base=None, save_ans=True,
                 save=None, stop=False):
        # Fields are given here or set by the registry's def* functions; the rest of
        # nbtape only reads them.  A rule made here is not registered (see rule_for).
        self.fn = fn
        self.compute = fn       # what runs without kwargs (operators use Python's, faster on scalars)
        self.name = name or name_of(fn)
        self.vjps = ()          # per-operand VJP lambdas (POSITIONAL kind)
        self.jvps = ()          # per-operand JVP lambdas
        self.vjp_all = vjp_all  # (g, ans, args, kwargs, needs) -> grads, other kinds
        self.jvp_all = jvp_all  # (tangents, ans, args, kwargs) -> tangent
        self.kind = kind        # a Kind
        self.start = start      # VARARGS: index of the first operand
        self.save = save        # per-position bool: keep this argument for the VJP (None:
        # keep every argument, (): keep none)
        self.save_ans = save_ans    # keep the output for the VJP
        self.nondiff = False    # output is a constant (comparisons, argmax, ...)
        self.multi = multi      # function returns a tuple of arrays
        self.stop = stop        # stop_gradient: recorded for explain, never followed
        self.zero = False       # piecewise constant: gradient is zero, not None
        self.nargs = nargs      # POSITIONAL: how many leading arguments are operands
        self.kwvjps = None      # {keyword: VJP} for operands numpy takes only by keyword
        self.kwjvps = None      # {keyword: JVP}, likewise
        self._given_sig = signature or None     # numpy's signature, when the maker knows it
        # The rule's variants, {key: Rule}: rules for some calls of the same function,
        # made at registration (a mode with another kind of result, see defmodes) or on
        # first use (calls with extra operands, see variant)
        self.variants = None
        self.choose = None      # (args, kwargs) -> the key of the call's mode in variants, or None
        self.base = base        # a variant's registered rule (core/operands.py)
        self.several = None     # the rule for calls that return several arrays instead of one
        self.refused = frozenset()  # POSITIONAL: positions before the last operand that are not
        # operands (np.sum's axis=, before initial=)
        self.composite = None   # computes fn from other numpy calls on tensors (defcomposite)
        self._derive()

    # Derived fields, set by _derive alone: ``save_all`` (every argument is kept),
    # ``fast`` (calls with at most this many positional arguments and no keywords have
    # their operands in place; -1: always ask operands.operands), and two caches read
    # on first use, ``_sig`` (numpy's signature, False if unknown) and
    # ``operand_names`` (registry.operand_names).  Setting any field they follow from
    # derives them again.
    _SOURCES = frozenset({"save", "kind", "zero", "nargs", "refused", "vjps", "fn"})

    def __setattr__(self, name, value):
        object.__setattr__(self, name, value)
        if name in Rule._SOURCES and hasattr(self, "fast"):    # (not while __init__ runs)
            self._derive()

    def _derive(self):
        save = self.save
        object.__setattr__(self, "save_all", save is None or (bool(save) and all(save)))
        object.__setattr__(self, "fast", -1 if self.kind is not POSITIONAL or self.zero
                           else min((self.nargs, *self.refused)))
        object.__setattr__(self, "_sig", self._given_sig)
        object.__setattr__(self, "operand_names", None)

    def given(self):
        """The fields given to this rule (not those derived from them), as a dict that
        ``restore`` takes back: how an override of a built-in rule is undone.

        >>> r = Rule(np.sin); saved = r.given(); r.nondiff = True
        >>> r.restore(saved); r.nondiff
        False
        """
        return {name: getattr(self, name) for name in _GIVEN}

    def restore(self, given):
        """Set the fields ``given()`` returned (in place: tables that hold this rule, the
        operators' among them, see it restored)."""
        for name, value in given.items():
            object.__setattr__(self, name, value)
        self._derive()

    @property
    def has_vjp(self):
        return bool(self.vjps) or self.vjp_all is not None or self.zero \
            or self.composite is not None

    @property
    def has_jvp(self):
        return bool(self.jvps) or self.jvp_all is not None or self.zero \
            or self.composite is not None

    @property
    def signature(self):
        """numpy's parameters of this rule's function (``signature.Signature``), or None."""
        sig = self._sig
        if sig is None:
            fallback = next((f for f in self.vjps if f is not None), None)
            sig = self._sig = signature_of(self.fn, fallback) or False
        return sig or None

    def differentiated(self):
        """numpy's names of the parameters this rule differentiates.

        >>> import numpy as np, nbtape
        >>> from nbtape.core.registry import RULES
        >>> RULES[np.diff].differentiated()
        ['a', 'prepend', 'append']
        """
        if self.nondiff or self.stop or self.zero:
            return []
        if self.kind is VARARGS:
            return ["*args"]
        sig = self.signature
        names = sig.names if sig else ()
        whole = self.vjp_all is not None or self.jvp_all is not None
        out = []
        for k in range(self.nargs if self.kind is POSITIONAL else 1):
            fns = [f[k] for f in (self.vjps, self.jvps) if k < len(f) and f[k] is not None]
            if whole or fns:
                out.append(names[k] if k < len(names) else f"argument {k}")
        return out + sorted(set(self.kwvjps or ()) | set(self.kwjvps or ()))

    def operands(self, args):
        """The arguments that can carry a gradient, in operand order."""
        if self.kind is POSITIONAL:
            return args if self.zero else args[:self.nargs]  # noqa: the common case
        if self.kind is SEQUENCE:
            return args[0] if args else ()
        return args[self.start:]

    def __repr__(self):
        return f"<nbtape rule for {self.name}>"


# the fields a rule is given (the rest, derived, follow from them: see Rule._derive)
_GIVEN = tuple(f for f in Rule.__slots__ if f not in ("save_all", "fast", "_sig", "operand_names"))


def name_of(fn):
    name = getattr(fn, "__name__", None) or repr(fn)
    mod = getattr(fn, "__module__", None) or ""
    if isinstance(fn, np.ufunc) or mod == "numpy" or mod.startswith("numpy._core") \
            or mod.startswith("numpy.core") or mod.startswith("numpy.lib"):
        return "np." + name
    if mod.startswith("numpy."):
        return "np." + mod[len("numpy."):] + "." + name
    return name
