"""What every test module, doctest module and notebook of the suite shares (``tests/conftest.py``
has what only the tests share)."""
import sys

import pytest


@pytest.fixture(autouse=True, scope="module")
def no_ipython_shell_left_behind():
    """IPython's shell is a process-wide singleton: a test module (or a doctest module such
    as ``nbtape/notebook/cell_runner.py``) may make it, and it goes with that module.  So
    each module starts without one, as a user's script does: ``hand_in``'s example, for
    one, shows nothing outside IPython."""
    yield
    shells = sys.modules.get("IPython.core.interactiveshell")
    if shells is not None and shells.InteractiveShell.initialized():
        shells.InteractiveShell.clear_instance()
