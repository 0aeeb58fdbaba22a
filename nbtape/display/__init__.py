"""How the engine shows things, with nothing from the notebook layer.

- ``numbers``: short text for numbers and arrays;
- ``cards``: a tape's repr and HTML card;
- ``pictures``: the hook through which the notebook layer draws a tape;
- ``coverage``: ``nt.coverage()``, the table of what nbtape differentiates;
- ``palette``: the colour-blind-safe colours and the text sizes every picture uses.
"""
