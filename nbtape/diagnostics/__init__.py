"""Saying what went wrong, at the user's line: the ground every other package stands on.

- ``user_line``: which frame is the user's (the one root of "is this nbtape's?");
- ``errors``: nbtape's exceptions and warnings, raised from the user's line;
- ``float_warnings``: numpy's overflow and invalid-value warnings at the user's line.

The reports that read a tape (breaks, explain, numerics, none warnings, check_numerics)
live with the tape, in ``nbtape.tape``.
"""
