"""Observation hooks: how widgets hear that a variable changed or a gradient was taken.

Observers are kept on the observed object itself (no global registry), weakly
for bound methods, so a closed or collected widget stops being called.  When
nobody observes, the cost is one ``if`` on assign and at the end of ``gradient``.
"""
import weakref


class Subscription:
    """Handle returned by ``observe``; ``remove()`` (or ``close()``) unsubscribes."""

    __slots__ = ("_target", "_ref")

    def __init__(self, target, ref):
        self._target = weakref.ref(target)
        self._ref = ref

    def remove(self):
        target = self._target()
        if target is not None and target._observers:
            try:
                target._observers.remove(self._ref)
            except ValueError:
                pass
    close = remove


class Observable:
    """Mixin: ``obj.observe(callback)``; callbacks get ``(obj, event, **info)``.

    >>> import nbtape as nt
    >>> v = nt.Variable(1.0)
    >>> seen = []
    >>> sub = v.observe(lambda var, event, **info: seen.append(event))
    >>> _ = v.assign(2.0); sub.remove(); _ = v.assign(3.0)
    >>> seen
    ['assign']
    """

    __slots__ = ()

    def observe(self, callback):
        if hasattr(callback, "__self__") and hasattr(callback, "__func__"):
            ref = weakref.WeakMethod(callback)
        else:
            ref = (lambda cb: (lambda: cb))(callback)
        if self._observers is None:
            self._observers = []
        self._observers.append(ref)
        return Subscription(self, ref)

    def _notify(self, event, **info):
        """Call every live observer with ``(self, event, **info)``."""
        for ref in list(self._observers or ()):
            cb = ref()
            if cb is None:
                self._observers.remove(ref)
            else:
                cb(self, event, **info)


def notify(obj, event, **info):
    """Tell ``obj``'s observers about ``event`` (nothing to do, quickly, when it has none)."""
    if obj._observers:
        obj._notify(event, **info)
