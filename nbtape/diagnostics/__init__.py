"""Saying what went wrong, at the user's line.

- ``user_line``: which frame is the user's (the one root of "is this nbtape's?");
- ``errors``: nbtape's exceptions and warnings, raised from the user's line;
- ``breaks``: where a path from a source stopped (an escape, a dtype, an object array);
  ``none_warnings``: the warning that names it when a gradient comes out None;
- ``explain``: ``tape.explain``, the story of one gradient;
- ``numerics``: why a gradient is NaN or inf (where the first one was born, the pattern,
  the fix); ``check_numerics``: ``nt.check_numerics()``, stop at the op that makes one;
  ``float_warnings``: numpy's overflow and invalid-value warnings at the user's line.
"""
