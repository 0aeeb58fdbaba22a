"""A marimo notebook served as an app on 127.0.0.1, and a browser context kept offline.

``MarimoApp(path).start()`` runs ``marimo run`` (marimo from PyPI: the ``marimo``
extra) on a free port, no token, with marimo's own configuration and caches in a
temporary home, and the checkout first on the kernel's path; ``.url``; ``.stop()``
ends the server and its children.  ``LOCAL_HOSTS`` are the hosts its pages may reach
(with ``server.Offline``: the app must work in a firewalled classroom).
"""
import os
import signal
import subprocess
import sys
import tempfile
import urllib.request
from pathlib import Path

from .server import REPO, free_port, wait_until_answering

START_TIMEOUT = 90.0
# marimo's page may name its server "localhost" too: still this machine
LOCAL_HOSTS = ("127.0.0.1", "localhost")


class MarimoError(AssertionError):
    """The app did not come up; the message carries the end of its log."""


class MarimoApp:
    def __init__(self, path):
        self.path = Path(path)
        self.port = None
        self.proc = None
        self.home = Path(tempfile.mkdtemp(prefix="nbtape-marimo-"))
        self.log_path = self.home / "marimo.log"

    @property
    def url(self):
        return f"http://127.0.0.1:{self.port}"

    def start(self):
        self.port = free_port()
        env = dict(os.environ, HOME=str(self.home), XDG_CONFIG_HOME=str(self.home / "config"),
                   XDG_CACHE_HOME=str(self.home / "cache"),
                   XDG_STATE_HOME=str(self.home / "state"), PYTHONUNBUFFERED="1")
        env["PYTHONPATH"] = os.pathsep.join(
            [str(REPO)] + [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p])
        cmd = [sys.executable, "-m", "marimo", "-y", "run", str(self.path),
               "--host", "127.0.0.1", "--port", str(self.port), "--headless", "--no-token",
               "--no-sandbox"]
        log = open(self.log_path, "ab")
        self.proc = subprocess.Popen(cmd, cwd=self.home, env=env, stdin=subprocess.DEVNULL,
                                     stdout=log, stderr=subprocess.STDOUT,
                                     start_new_session=True)
        probe = lambda: urllib.request.urlopen(self.url + "/", timeout=2).close()  # noqa: E731
        why = wait_until_answering(self.proc, probe, START_TIMEOUT)
        if why:
            raise MarimoError(f"marimo {why} on {self.url}:\n{self.log_tail()}")
        return self

    def log_tail(self, lines=30):
        try:
            text = self.log_path.read_text(errors="replace")
        except OSError:
            return "(no log)"
        return "marimo's log ends:\n" + "\n".join(text.splitlines()[-lines:])

    def stop(self):
        if self.proc is not None and self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGTERM)
                self.proc.wait(15)
            except (OSError, subprocess.TimeoutExpired):
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(5)
        self.proc = None
