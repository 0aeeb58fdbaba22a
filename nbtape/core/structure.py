"""Nested sources and targets: lists, tuples and dicts of tensors, flattened and rebuilt."""


def flatten(x):
    """Leaves of a nested list/tuple/dict, in order (dicts by insertion order).

    >>> flatten([1, {"a": 2, "b": (3, 4)}])
    [1, 2, 3, 4]
    """
    if not isinstance(x, _NESTS):
        return [x]                  # one tensor: the common case of every gradient call
    t = type(x)
    if t is list or t is tuple:     # a flat list of sources, as a training step has
        for v in x:
            if isinstance(v, _NESTS):
                break
        else:
            return list(x)
    out = []
    _flatten(x, out)
    return out


def _flatten(x, out):
    if isinstance(x, dict):
        for v in x.values():
            _flatten(v, out)
    elif isinstance(x, (list, tuple)):
        for v in x:
            _flatten(v, out)
    else:
        out.append(x)


def unflatten(structure, leaves):
    """Put ``leaves`` back into the shape of ``structure``.

    >>> unflatten([0, {"a": 0, "b": (0, 0)}], [1, 2, 3, 4])
    [1, {'a': 2, 'b': (3, 4)}]
    """
    if not isinstance(structure, _NESTS):
        return leaves[0]
    t = type(structure)
    if t is list or t is tuple:
        for x in structure:
            if isinstance(x, _NESTS):
                break
        else:
            return t(leaves)        # a flat list of sources, as a training step has
    it = iter(leaves)
    return _rebuild(structure, it)


_NESTS = (dict, list, tuple)


def _rebuild(x, it):
    if isinstance(x, dict):
        return type(x)((k, _rebuild(v, it)) for k, v in x.items())
    if isinstance(x, tuple) and hasattr(x, "_fields"):
        return type(x)(*[_rebuild(v, it) for v in x])
    if isinstance(x, (list, tuple)):
        return type(x)(_rebuild(v, it) for v in x)
    return next(it)
