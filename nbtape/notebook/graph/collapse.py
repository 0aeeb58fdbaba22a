"""Big tapes, readable pictures: choose which ops to draw, fold the rest into boxes.

A training loop records thousands of ops.  Past ``max_nodes`` the picture keeps
the ops that must be seen (the highlighted step, the target's op), one copy of
the first and last repetition of a repeated step (a loop body), then the ops
nearest the target, and folds every run of ops it leaves out into one box that
says what is inside.  Everything here is linear in the number of ops (the
period search is a few numpy passes), so a 10,000-op tape plans in milliseconds.
"""
import collections

import numpy as np

MAX_PERIOD = 200


class Group:
    """A run of consecutive (in tape order) ops drawn as one box."""

    __slots__ = ("index", "ops", "period", "reps", "step_names")

    def __init__(self, index, ops):
        self.index, self.ops = index, ops
        self.period = self.reps = self.step_names = None

    @property
    def name(self):
        return f"skip{self.index}"


class Plan:
    """Which ops are drawn, which are folded into groups, which leaves are drawn."""

    def __init__(self, kept, groups, leaves, shown_total, repetition):
        self.kept, self.groups, self.leaves = kept, groups, leaves
        self.shown_total, self.repetition = shown_total, repetition
        self.group_of = {i: g for g in groups for i in g.ops}

    @property
    def collapsed(self):
        return bool(self.groups)


def op_cost(op):
    """Nodes an op adds to the picture: itself and its constant operands.

    >>> import nbtape as nt
    >>> x = nt.Variable(1.0)
    >>> with nt.GradientTape() as tape:
    ...     y = x * 2.0
    >>> op_cost(tape.ops[0])
    2
    """
    return 1 + sum(1 for t in op.in_ids if t is None)


def _signatures(model, shown):
    producer, leaves, ops = model.producer, model.leaves, model.ops
    codes, sig_code = [], {}
    for i in shown:
        op = ops[i]
        desc = []
        for t in op.in_ids:
            if t is None:
                desc.append(None)
            elif t in leaves:
                desc.append(("l", leaves[t].index))
            else:
                j, m = producer.get(t, (None, 0))
                desc.append(("o", i - j, m) if j is not None else ("x",))
        sig = (op.rule.name, tuple(desc))
        codes.append(sig_code.setdefault(sig, len(sig_code)))
    return np.asarray(codes, dtype=np.int64)


def find_repetition(model, shown):
    """``(start, period, reps)`` of the longest repeated step in ``shown``, or None.

    Ops match when they run the same function on operands at the same relative
    positions (or the same leaves), so a loop body repeats even though each
    iteration computes new values.

    >>> import numpy as np, nbtape as nt
    >>> from nbtape.notebook.graph.model import TapeModel
    >>> x = nt.Variable(1.0)
    >>> with nt.GradientTape() as tape:
    ...     y = np.exp(x)
    ...     for _ in range(10):
    ...         y = np.sin(y) * 2.0
    >>> find_repetition(TapeModel(tape), list(range(len(tape))))
    (1, 2, 10)
    """
    n = len(shown)
    if n < 6:
        return None
    codes = _signatures(model, shown)
    best = []
    for p in range(1, min(MAX_PERIOD, n // 3) + 1):
        eq = codes[p:] == codes[:-p]
        if not eq.any():
            continue
        d = np.diff(np.concatenate(([0], eq.astype(np.int8), [0])))
        starts, ends = np.flatnonzero(d == 1), np.flatnonzero(d == -1)
        k = int(np.argmax(ends - starts))
        best.append((int(ends[k] - starts[k]) + p, p, int(starts[k])))
    if not best:
        return None
    top = max(c for c, _, _ in best)
    cover, p, start = min((b for b in best if b[0] >= 0.98 * top), key=lambda b: b[1])
    reps = cover // p
    return (start, p, reps) if reps >= 3 else None


def _priority(model, shown, forced, seeds, repetition):
    shown_set = set(shown)
    order, seen = [], set()

    def push(i):
        if i in shown_set and i not in seen:
            seen.add(i)
            order.append(i)
    for i in sorted(forced, reverse=True):
        push(i)
    if repetition is not None:
        # One copy of the first and of the last repetition tells the loop's story;
        # the repetitions between them are what gets folded, never drawn.
        start, p, reps = repetition
        end = start + p * reps
        if len(shown) - end <= p:   # a short epilogue: the last partial step, the loss
            for j in range(len(shown) - 1, end - 1, -1):
                push(shown[j])
        for j in range(end - 1, end - p - 1, -1):
            push(shown[j])
        for j in range(start, start + p):
            push(shown[j])
        if start <= max(p, 3):      # a short prologue before the loop (its setup)
            for j in range(start - 1, -1, -1):
                push(shown[j])
        seen.update(shown[start + p:end - p])
    # Breadth first from the target's ops: what the target depends on most directly.
    queue = collections.deque(sorted(seeds, reverse=True))
    visited = set(queue)
    producer, ops = model.producer, model.ops
    while queue:
        i = queue.popleft()
        push(i)
        for t in ops[i].in_ids:
            j = producer.get(t, (None,))[0] if t is not None else None
            if j is not None and j in shown_set and j not in visited:
                visited.add(j)
                queue.append(j)
    for i in reversed(shown):
        push(i)
    return order


def plan(model, shown, max_nodes, forced=(), seeds=(), forced_leaves=(), reserve=0):
    """Choose the ops to draw so the picture has about ``max_nodes`` nodes.

    ``shown`` are the candidate op positions, ``forced`` ops and ``forced_leaves``
    are always drawn, ``seeds`` are the target's ops (kept first, then their
    inputs' ops, breadth first), ``reserve`` nodes are left for notes.

    >>> import nbtape as nt
    >>> from nbtape.notebook.graph.model import TapeModel
    >>> x = nt.Variable(1.0)
    >>> with nt.GradientTape() as tape:
    ...     y = x
    ...     for _ in range(100):
    ...         y = y * 0.5
    >>> p = plan(TapeModel(tape), range(100), 10, seeds=[99])
    >>> p.kept, [(g.name, len(g.ops), g.reps) for g in p.groups]
    ([0, 1, 99], [('skip0', 97, 97.0)])
    >>> group_summary(TapeModel(tape), p.groups[0])
    ['... 97 ops not shown (op 2 to op 98)', 'the same 1-op step (np.multiply) 97 times']
    """
    shown = sorted(shown)
    ops, leaves = model.ops, model.leaves
    forced_leaves = [t for t in forced_leaves if t in leaves]
    used = set(forced_leaves)
    total = 0
    for i in shown:
        total += op_cost(ops[i])
        used.update(t for t in ops[i].in_ids if t in leaves)
    if total + len(used) + reserve <= max_nodes:
        return Plan(shown, [], used, len(shown), None)
    repetition = find_repetition(model, shown)
    pos = {i: j for j, i in enumerate(shown)}
    kept = np.zeros(len(shown) + 2, dtype=bool)    # padded: both ends count as kept
    kept[0] = kept[-1] = True
    leaf_set = set(forced_leaves)
    cost = len(leaf_set) + 1 + reserve             # one box holds every op at first
    forced = set(forced)
    for i in _priority(model, shown, forced, seeds, repetition):
        j = pos[i] + 1
        left, right = kept[j - 1], kept[j + 1]
        gaps = 1 if not left and not right else (-1 if left and right else 0)
        new = {t for t in ops[i].in_ids if t in leaves and t not in leaf_set}
        delta = op_cost(ops[i]) + len(new) + gaps
        if cost + delta > max_nodes and i not in forced:
            break
        kept[j] = True
        leaf_set |= new
        cost += delta
    kept_ops = [i for i in shown if kept[pos[i] + 1]]
    groups, run = [], []
    for i in shown:
        if kept[pos[i] + 1]:
            if run:
                groups.append(Group(len(groups), run))
                run = []
        else:
            run.append(i)
    if run:
        groups.append(Group(len(groups), run))
    if repetition is not None:
        start, p, reps = repetition
        region = set(shown[start:start + p * reps])
        step = [ops[i].rule.name for i in shown[start:start + p]]
        for g in groups:
            if len(g.ops) >= p and region.issuperset(g.ops):
                g.period, g.reps, g.step_names = p, len(g.ops) / p, step
    return Plan(kept_ops, groups, leaf_set, len(shown), repetition)


def group_summary(model, group):
    """Lines of text for a group's box (see ``plan`` for an example).

    The caller escapes them; they hold op names and counts only.
    """
    ops = model.ops
    first, last = group.ops[0], group.ops[-1]
    n = len(group.ops)
    lines = [f"... {n:,} op{'s' if n != 1 else ''} not shown"
             + (f" (op {first:,} to op {last:,})" if n > 1 else f" (op {first:,})")]
    if group.period:
        step = ", ".join(group.step_names[:4]) + (", ..." if len(group.step_names) > 4 else "")
        about = "" if group.reps == int(group.reps) else "about "
        lines.append(f"the same {group.period}-op step ({step}) {about}{group.reps:,.0f} times")
    else:
        counts = collections.Counter(ops[i].rule.name for i in group.ops)
        common = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
        text = ", ".join(f"{name} x{c:,}" for name, c in common[:3])
        lines.append(text + (f", {len(common) - 3} more kinds" if len(common) > 3 else ""))
    return lines
