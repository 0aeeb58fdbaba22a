"""setuptools' build (pyproject.toml says the rest), with one step more: the wheel gets
the tutorials as ``nbtape/notebook/tutorials/``, each with its folded solutions taken
out (``nbtape/notebook/exercises/learner_copy.py``), so that a teacher with only
``pip install nbtape`` has the tutorials and the course builder while no student's
install holds an answer key.  The copy is made from whatever ``notebooks/`` holds at
build time (the checkout's, or the sdist's, which MANIFEST.in puts in).
"""
import importlib.util
import pathlib

from setuptools import setup
from setuptools.command.build_py import build_py

HERE = pathlib.Path(__file__).resolve().parent


def _learner_copy():
    """The stripping module, loaded by its path: the build has no numpy to import nbtape."""
    path = HERE / "nbtape" / "notebook" / "exercises" / "learner_copy.py"
    spec = importlib.util.spec_from_file_location("_nbtape_learner_copy", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class BuildWithTutorials(build_py):
    """``build_py``, then the learner's copy of the tutorials into the built package."""

    def run(self):
        super().run()
        if getattr(self, "editable_mode", False):
            return      # an editable install reads the checkout's notebooks/ itself
        target = pathlib.Path(self.build_lib) / "nbtape" / "notebook" / "tutorials"
        names = _learner_copy().write_learner_copies(HERE / "notebooks", target)
        if not any(n[0].isdigit() for n in names):
            raise SystemExit(f"no tutorials in {HERE / 'notebooks'}: the wheel would ship "
                             "without them (build from a checkout or from the sdist)")


setup(cmdclass={"build_py": BuildWithTutorials})
