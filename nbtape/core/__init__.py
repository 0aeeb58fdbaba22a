"""The values nbtape computes with, and how a numpy call on them reaches a recorder.

Read in this order:

- ``state``: the per-thread stack of active recorders (the one piece of global state);
- ``recorder``: the ``Recorder`` protocol every recorder implements;
- ``tensor`` and ``variable``: the values (``arrays`` tells numpy's from foreign ones;
  ``owned``: a tensor owns its array; ``reprs``: how they show, filled in by the display);
- ``dispatch``: a numpy call on tensors runs, then is offered to each recorder;
- ``operands``: which arguments of a call are operands, for the rule registry;
- ``rule``: a ``Rule``, everything nbtape knows about differentiating one function;
  ``registry``: the table and the ``def*`` functions that fill it (``nbtape.extend`` is
  their public face); ``reads`` tells which arguments a VJP reads, ``signature`` binds
  keywords to numpy's own parameters; ``primitive`` makes a function of plain arrays
  one recorded step;
- ``structure`` (nested lists/dicts of values) and ``observe`` (who is told of changes).

The core stands on ``nbtape.diagnostics`` alone: what the floors above give it
arrives through hooks they set when imported (``reprs`` from the display, late rules
through ``registry.set_late_loader``), and the tensors' Python operators are installed
by ``nbtape.rules.operators``, beside the rules they call.
"""
