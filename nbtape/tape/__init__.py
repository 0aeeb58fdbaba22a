"""Recording and playing back: the tape, what it keeps, and the passes over it.

Read in this order:

- ``gradient_tape``: ``GradientTape``, a ``Recorder`` that keeps one record per op;
- ``records``: the record (an exact tuple, read by named fields) and its ``Op`` view;
- ``snapshot``: what a record saves of plain arrays a user could change later (a copy,
  or for a big one a fingerprint that a pass checks);
- ``backward``: the reverse pass, one loop over the records, newest first;
- ``arguments``: checking what ``gradient`` is given;
- ``jacobians`` and ``batched``: many reverse passes at once;
- ``forward``: ``ForwardAccumulator``, forward mode, a ``Recorder`` with no tape;
- ``bookkeeping`` and ``view``: what a tape shows of itself (watches, notes, reprs);
- the reports that read a tape: ``breaks`` (where a path from a source stopped: an
  escape, a dtype, an object array), ``none_warnings`` (the warning that names it when a
  gradient comes out None), ``explain`` (``tape.explain``, the story of one gradient),
  ``numerics`` (why a gradient is NaN or inf, with ``nan_patterns``: the known causes,
  their fixes and the warning's first line) and ``check_numerics``
  (``nt.check_numerics()``, stop at the op that makes one).
"""
