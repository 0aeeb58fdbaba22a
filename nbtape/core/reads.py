"""What a VJP reads: which of a function's arguments (and whether its output) a tape
must keep for the reverse pass, found from the VJPs' own code, so that a tape saves
only those.

>>> vjp_reads([lambda g, ans, x, y: g * y, lambda g, ans, x, y: g * x])
((True, True), False)
>>> vjp_reads([lambda g, ans, x: g * ans]), vjp_reads([lambda g, *a: g]) is None
(((False,), True), True)
"""
import dis
import inspect


def used_names(fn):
    """Names a function (or its nested closures) loads, or None if unknown."""
    try:
        code = fn.__code__
    except AttributeError:
        return None
    names = set()
    stack = [code]
    while stack:
        c = stack.pop()
        for ins in dis.get_instructions(c):
            if ins.opname.startswith(("LOAD_FAST", "LOAD_DEREF", "LOAD_CLOSURE")):
                val = ins.argval
                names.update(val if isinstance(val, tuple) else (val,))
        stack.extend(k for k in c.co_consts if inspect.iscode(k))
    return names


def positional_params(fn):
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return None
    params = list(sig.parameters.values())
    if any(p.kind is p.VAR_POSITIONAL for p in params):
        return None
    return [p.name for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]


def vjp_reads(vjps):
    """``(save, save_ans)``: per argument position, whether some VJP reads it, and
    whether one reads ``ans``; None when a VJP's code cannot be read (keep it all).

    Each VJP is read on its own, by position (its parameters may have other names
    than another's); a VJP made from a derivative (``defderiv``) is read through it.
    """
    save, save_ans, any_fn = [], False, False
    for f in vjps:
        if f is None:
            continue
        any_fn = True
        d = getattr(f, "derivative", None)
        src = f if d is None else d
        u, p = used_names(src), positional_params(src)
        if u is None or p is None or len(p) < 2 - (d is not None):
            return None
        if d is not None:
            p = [None, *p]                  # a derivative takes (ans, *args): no g
        save_ans = save_ans or p[1] in u
        args = p[2:]
        save += [False] * (len(args) - len(save))
        for k, name in enumerate(args):
            save[k] = save[k] or name in u
    return (tuple(save), save_ans) if any_fn else None
