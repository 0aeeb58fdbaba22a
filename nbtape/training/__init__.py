"""Keras-style training pieces built on the engine: optimizers, losses, layers, clipping,
activations (``nn``), random numbers (``random``, drawn by the ops of ``draws``) and a
small offline data set.

Users reach them as ``nt.optimizers``, ``nt.losses``, ``nt.layers``, ``nt.Sequential``,
``nt.nn``, ``nt.clip_by_*``, ``nt.global_norm``, ``nt.random`` and ``nt.datasets``.
This package imports the engine; the engine never imports it.
"""
