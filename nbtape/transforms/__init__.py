"""Functions that change how a computation is differentiated, built on the tape.

- ``custom``: ``custom_gradient`` and ``stop_gradient``;
- ``recompute``: ``recompute_grad`` (keep less, run the function again in the pass);
- ``functional``: ``grad``, ``value_and_grad``, ``jacobian``, ``hessian``;
- ``check``: ``check_gradients`` against central differences;
- ``function``: ``nt.function`` (trace a step once, replay its numpy calls), built on
  ``trace`` (the recorder that keeps every call), ``program`` (the trace as one
  generated Python function, and as text) and ``drawing`` (its picture);
- ``refusals``: the words of the tracer's refusals (what froze, where, what to write);
- ``input_signature``: a call's arguments bound and keyed as ``tf.function`` keys traces;
- ``randomness``: the random generators a function can reach and their states (what
  ``function`` refuses to freeze and ``recompute`` replays);
- ``second_trace``: the checks that trace a step once more (frozen draws, numbers
  parsed out of a traced value's text).
"""
