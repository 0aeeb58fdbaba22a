"""Handing an answer in: the learner's answer as plain data, for a grader outside the kernel.

A graded check cell (``nt.exercises.check(id, answer, strict=True)``, as the course
writes it) hands the answer in as well as checking it: ``pack`` turns each argument into
JSON (numbers and arrays by value; functions and classes by their source, with the
values and helpers they read from the notebook), and ``hand_in`` shows that as one
output of the cell.  The course's autograde step (``grader``) reads only that output and
judges it in a fresh Python, so nothing the learner's kernel patched (the checker, numpy,
builtins, the import system) takes part in the verdict.  Exercises whose answer is a
side effect (06b's rule) or a tape (03c) are handed in as what the check measures.
"""
import ast
import inspect
import linecache
import math
import types

import numpy as np

MIME = "application/vnd.nbtape.answer+json"
_NUMBER = (int, float, np.integer, np.floating)


def pack(value, _seen=None):
    """``value`` as JSON-able data that ``grader.unpack`` turns back into an answer.

    >>> pack([1.5, (2, None)])
    {'$list': [1.5, {'$tuple': [2, None]}]}
    >>> pack(np.array([1.0, 2.0]))
    {'$array': [1.0, 2.0], 'dtype': 'float64'}
    >>> pack(x for x in [1])
    {'$other': 'generator'}
    """
    seen = set() if _seen is None else _seen
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, _NUMBER):
        number = float(value) if isinstance(value, (float, np.floating)) else int(value)
        if isinstance(number, float) and not math.isfinite(number):
            return {"$float": repr(number)}
        return number
    if hasattr(value, "numpy") and callable(value.numpy) and not isinstance(value, type):
        value = value.numpy()                           # a Tensor or a Variable
    if isinstance(value, (np.ndarray, np.generic)):
        if value.dtype.kind not in "biuf":
            return {"$other": f"array of {value.dtype}"}
        return {"$array": value.astype(float).tolist() if value.dtype.kind == "f"
                else value.tolist(), "dtype": str(value.dtype)}
    if isinstance(value, (list, tuple)):
        return {"$list" if isinstance(value, list) else "$tuple":
                [pack(v, seen) for v in value]}
    if isinstance(value, type) or inspect.isfunction(inspect.unwrap(value)) \
            if callable(value) else False:
        return _pack_code(value, seen)
    return {"$other": type(value).__name__}


# Functions of these packages travel by name: the grader has them too.
LIBRARIES = ("numpy", "nbtape", "math", "builtins")


def _pack_code(value, seen):
    """A function or a class by its source, with the notebook names its code reads;
    a library's own function by its name."""
    name = getattr(value, "__name__", "answer")
    module = getattr(value, "__module__", None) or ""
    if module.split(".")[0] in LIBRARIES:
        return {"$ref": module, "name": getattr(value, "__qualname__", name)}
    try:
        if isinstance(value, type):
            source = class_source(value)
        elif name == "<lambda>":
            name, source = "__answer__", "__answer__ = " + lambda_source(value)
        else:
            source = inspect.getsource(inspect.unwrap(value))
    except (OSError, TypeError, SyntaxError):
        return {"$other": f"{type(value).__name__} whose source cannot be read"}
    packed = {"$code": name, "source": source, "names": {}}
    if id(value) in seen:
        return packed
    seen.add(id(value))
    for key, used in _globals_read(value).items():
        if isinstance(used, types.ModuleType):
            packed["names"][key] = {"$module": used.__name__}
        elif callable(used):                # a helper: by source, or a library's by name
            packed["names"][key] = pack(used, seen)
        elif used is None or isinstance(used, (bool, str, list, tuple, np.ndarray)
                                        + _NUMBER):
            packed["names"][key] = pack(used, seen)
    return packed


def _globals_read(value):
    """The notebook's names that ``value``'s code reads (its methods' too, for a class)."""
    codes, env = [], {}
    functions = [inspect.unwrap(value)] if not isinstance(value, type) else \
        [f for f in vars(value).values() if inspect.isfunction(f)]
    for fn in functions:
        env = getattr(fn, "__globals__", env)
        stack = [fn.__code__]
        while stack:
            code = stack.pop()
            codes.append(code)
            stack.extend(c for c in code.co_consts if isinstance(c, types.CodeType))
    names = {n for code in codes for n in code.co_names}
    return {n: env[n] for n in sorted(names) if n in env}


def lambda_source(fn):
    """A lambda's own text, out of the line (or lines) it sits in.

    >>> double = lambda v: 2 * v
    >>> lambda_source(double)
    'lambda v: 2 * v'
    """
    code = fn.__code__
    lines = linecache.getlines(code.co_filename) or \
        inspect.getsourcelines(inspect.getmodule(fn) or fn)[0]
    text = "".join(lines)
    found = [node for node in ast.walk(ast.parse(text))
             if isinstance(node, ast.Lambda) and node.lineno == code.co_firstlineno
             and [a.arg for a in node.args.args] == list(
                 code.co_varnames[:code.co_argcount])]
    if len(found) != 1:
        raise OSError("the lambda cannot be told from others on its line")
    return ast.get_source_segment(text, found[0])


def class_source(cls):
    """A class's source; for a class defined in a notebook cell, found through its methods.

    >>> class Demo:
    ...     def twice(self, x):
    ...         return 2 * x
    >>> class_source(Demo).splitlines()[0]
    'class Demo:'
    """
    try:
        return inspect.getsource(cls)
    except (OSError, TypeError):
        pass
    for fn in vars(cls).values():
        code = getattr(fn, "__code__", None)
        if code is None:
            continue
        text = "".join(linecache.getlines(code.co_filename))
        for node in ast.walk(ast.parse(text)) if text else ():
            if isinstance(node, ast.ClassDef) and node.name == cls.__name__:
                start = min([node.lineno] + [d.lineno for d in node.decorator_list])
                lines = text.splitlines(keepends=True)[start - 1:node.end_lineno]
                return "".join(lines)
    raise OSError(f"the source of class {cls.__name__} cannot be found")


def _probe_rule(log_cosh):
    """06b: the answer is a rule registered on ``log_cosh``: handed in as what it gives
    (values and reverse-mode gradients) at the check's points."""
    import nbtape as nt
    from .early import POINTS_06B
    if not callable(log_cosh):
        return [pack(log_cosh)]
    grad = None
    try:
        x = nt.Variable(POINTS_06B)
        with nt.GradientTape() as tape:
            value = log_cosh(x)
        grad = tape.gradient(value, x)
    except nt.NoGradientRuleError:          # no rule yet: the grader's copy has none either
        pass
    except Exception as error:              # the learner's rule: the grader says it raised
        return [{"$raised": f"{type(error).__name__}: {error}"}]
    return [{"$rule": {"x": pack(POINTS_06B), "value": pack(value), "grad": pack(grad)}}]


def _probe_tape(answer, disc, area, r):
    """03c: a tape cannot travel: handed in as the gradient it gives, with ``answer``."""
    try:
        grad = disc.gradient(area, r) if hasattr(disc, "gradient") else None
        error = None
    except Exception as raised:             # a tape used up: the grader says so
        grad, error = None, f"{type(raised).__name__}: {raised}"
    return [pack(answer), {"$tape": {"is_tape": type(disc).__name__ == "GradientTape",
                                     "grad": pack(grad), "raised": error}},
            pack(r)]


PROBES = {"06b-log-cosh": _probe_rule, "03c-tape-magic": _probe_tape}


def hand_in(id, args):
    """Show the answer to exercise ``id`` as an output the course's grader reads.

    Outside a notebook (no IPython) nothing is shown; the data is returned either way.

    >>> hand_in("03-gradient", (np.array([1.0, 2.0, 8.0]),))["args"]
    [{'$array': [1.0, 2.0, 8.0], 'dtype': 'float64'}]
    """
    probe = PROBES.get(id)
    try:
        packed = probe(*args) if probe else [pack(a) for a in args]
    except Exception as error:              # an odd answer: the grader says it got none
        packed = [{"$other": f"answer that could not be handed in ({type(error).__name__})"}]
    data = {"id": id, "args": packed}
    try:
        from IPython import get_ipython
        from IPython.display import display
    except ImportError:                     # a plain Python: there is no cell to show it in
        return data
    if get_ipython() is not None:
        display({MIME: data, "text/plain": f"(answer to {id} handed in)"}, raw=True)
    return data
