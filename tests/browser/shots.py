"""Where the browser tests put their screenshots, so a person can look at what was checked.

Default: ``tests/browser/screenshots/`` (git-ignored), emptied of the previous run's
pictures at the start of a run; ``NBTAPE_SCREENSHOTS`` chooses another folder.  The
folder is printed in pytest's terminal summary and named in every failure message.
"""
import os
import re
from pathlib import Path

ENV_VAR = "NBTAPE_SCREENSHOTS"
DEFAULT = Path(__file__).resolve().parent / "screenshots"
# What a run leaves in the folder (and so what the next run may delete).
OURS = ("*.png", "jupyterlab.log")


def safe_name(label):
    """A file name for ``label``.

    >>> safe_name("06_tape player / frame 1")
    '06_tape_player_frame_1'
    """
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", label).strip("_") or "screenshot"


class Screenshots:
    def __init__(self, folder=None):
        self.folder = Path(folder or os.environ.get(ENV_VAR) or DEFAULT).resolve()
        self.taken = []

    def prepare(self):
        self.folder.mkdir(parents=True, exist_ok=True)
        for pattern in OURS:
            for old in self.folder.glob(pattern):
                old.unlink()
        return self

    def take(self, target, label):
        """Screenshot a Playwright Page or Locator as ``<label>.png``; its path.

        A screenshot must never turn a test's real failure into a different one, so
        when the element cannot be captured (gone, never shown) the whole page is
        taken instead, and when even that fails the path says so.
        """
        path = self.folder / (safe_name(label) + ".png")
        try:
            target.screenshot(path=str(path), timeout=15_000)
        except Exception as exc:               # noqa: BLE001 - see the docstring
            page = getattr(target, "page", None)
            try:
                if page is None:
                    raise
                page.screenshot(path=str(path), timeout=15_000)
            except Exception:                   # noqa: BLE001
                return f"{path} (could not be taken: {type(exc).__name__}: {exc})"
        self.taken.append(path)
        return str(path)
