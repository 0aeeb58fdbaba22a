"""A throwaway JupyterLab server for the browser tests: loopback only, own token, own dirs.

Everything the server, its kernels and the Lab front end would read from or write to a
user's home (config, kernel specs, settings, workspaces, runtime files, IPython
profile) points into one temporary directory, so a developer's own Jupyter set-up
cannot change what the tests see, and the tests leave nothing behind.  The kernel spec
names this interpreter by absolute path and ``PYTHONPATH`` starts with this checkout,
so the notebooks run the nbtape under test with the Python running pytest.

``stop()`` is safe to call on every path (twice, after a failed start, from atexit):
it asks the server to shut down its kernels, then signals it, then kills whatever of
its process tree is left, by process id.
"""
import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
import uuid
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
KERNEL_NAME = "python3"          # what the tutorial notebooks' metadata asks for
START_TIMEOUT = 90.0             # a cold start on a loaded 2-core CI machine
LOG_TAIL = 40

# Lab settings (user-level, in our own settings dir):
SETTINGS = {
    # No news/update toast over the notebook (and no request to the closed network).
    "@jupyterlab/apputils-extension/notification": {"fetchNews": "false",
                                                    "checkForUpdates": False},
    # Attach every cell to the page, so every output is in the DOM to be checked
    # (the default windowing leaves off-screen cells out or unpainted).
    "@jupyterlab/notebook-extension/tracker": {"windowingMode": "none"},
}
SERVER_CONFIG = {
    "ServerApp": {
        # Terminals are not needed here and cost start-up time.  (jupyter_lsp stays: the
        # Lab front end asks it for its status, and a 404 would be noise in the console.)
        "jpserver_extensions": {"jupyter_server_terminals": False},
        "terminals_enabled": False,
    },
}


def wait_until_answering(proc, probe, seconds):
    """Call ``probe()`` until it returns without an ``OSError`` (``URLError`` is one):
    ``None`` then, or why not (``proc`` exited, or ``seconds`` passed), for the
    caller's error with its server's log.

    >>> import subprocess, sys
    >>> done = subprocess.Popen([sys.executable, "-c", "pass"]); _ = done.wait()
    >>> wait_until_answering(done, lambda: 1 / 0, 5)
    'exited with code 0 before answering'
    """
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            return f"exited with code {proc.returncode} before answering"
        try:
            probe()
            return None
        except OSError:
            time.sleep(0.25)
    return f"did not answer within {seconds:.0f} s"


class Offline:
    """A Playwright route handler that aborts and records every request of a page that
    would leave ``hosts`` (the pages must work in a firewalled classroom).

    >>> Offline().blocked
    []
    """

    def __init__(self, hosts=("127.0.0.1",)):
        self.hosts = hosts
        self.blocked = []

    def route(self, route):
        host = urllib.parse.urlsplit(route.request.url).hostname
        if host in self.hosts:
            route.continue_()
        else:
            self.blocked.append(route.request.url)
            route.abort("internetdisconnected")


class ServerError(RuntimeError):
    """The server did not come up; the message carries the end of its log."""


def free_port():
    """A TCP port on 127.0.0.1 that nothing listens on right now.

    >>> 1024 <= free_port() < 65536
    True
    """
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def isolated_env(home):
    """The environment for the server and its kernels: every Jupyter dir under ``home``."""
    home = Path(home)
    env = dict(os.environ)
    for var, sub in (("JUPYTER_CONFIG_DIR", "config"), ("JUPYTER_DATA_DIR", "data"),
                     ("JUPYTER_RUNTIME_DIR", "runtime"),
                     ("JUPYTERLAB_SETTINGS_DIR", "lab-settings"),
                     ("JUPYTERLAB_WORKSPACES_DIR", "lab-workspaces"),
                     ("IPYTHONDIR", "ipython")):
        env[var] = str(home / sub)
        (home / sub).mkdir(parents=True, exist_ok=True)
    # A user's JUPYTER_PATH could bring in other kernel specs or extensions' settings.
    env.pop("JUPYTER_PATH", None)
    env["PYTHONPATH"] = os.pathsep.join(
        [str(REPO)] + [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p])
    env["PYTHONUNBUFFERED"] = "1"      # the server log is complete when we show it
    return env


def write_config(home):
    """Kernel spec (this Python, by absolute path), server config and Lab settings."""
    home = Path(home)
    spec = home / "data" / "kernels" / KERNEL_NAME
    spec.mkdir(parents=True, exist_ok=True)
    (spec / "kernel.json").write_text(json.dumps({
        "argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": "Python 3 (ipykernel)",
        "language": "python",
        "metadata": {"debugger": False},
    }, indent=1))
    (home / "config" / "jupyter_server_config.json").write_text(json.dumps(SERVER_CONFIG))
    for plugin, values in SETTINGS.items():
        path = home / "lab-settings" / (plugin + ".jupyterlab-settings")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(values))


class LabServer:
    """``LabServer(root, home).start()``; then ``.url``, ``.token``, ``.api(...)``, ``.stop()``."""

    def __init__(self, root, home):
        self.root = Path(root)
        self.home = Path(home)
        self.token = uuid.uuid4().hex
        self.port = None
        self.proc = None
        self.log_path = self.home / "jupyterlab.log"
        self._log = None
        self._tree = {}         # pid -> start time of processes under the server (kernels)

    @property
    def url(self):
        return f"http://127.0.0.1:{self.port}"

    def start(self, attempts=3):
        env = isolated_env(self.home)      # makes the dirs that write_config fills
        write_config(self.home)
        last = None
        for _ in range(attempts):   # another process may grab the free port first
            self.port = free_port()
            try:
                self._launch(env)
                return self
            except ServerError as exc:
                last = exc
                self.stop()
                if "address already in use" not in str(exc).lower():
                    break
        raise last

    def _launch(self, env):
        cmd = [sys.executable, "-m", "jupyterlab", "--no-browser",
               "--ServerApp.ip=127.0.0.1", f"--ServerApp.port={self.port}",
               "--ServerApp.port_retries=0",
               f"--ServerApp.root_dir={self.root}",
               f"--IdentityProvider.token={self.token}",
               "--ServerApp.open_browser=False",
               "--LabApp.expose_app_in_browser=True",   # window.jupyterapp for the tests
               # and in Notebook 7's pages (served by this server too: tests/browser/notebook7.py)
               "--JupyterNotebookApp.expose_app_in_browser=True",
               "--LabApp.news_url=None",
               "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate"]
        if hasattr(os, "geteuid") and os.geteuid() == 0:
            cmd.append("--allow-root")          # CI containers run as root
        self._log = open(self.log_path, "ab")
        # A session of its own: a Ctrl-C in the terminal reaches pytest (which then
        # tears down in order), not the server in the middle of a test.
        self.proc = subprocess.Popen(cmd, cwd=self.root, env=env, stdin=subprocess.DEVNULL,
                                     stdout=self._log, stderr=subprocess.STDOUT,
                                     start_new_session=True)
        why = wait_until_answering(self.proc, lambda: self.api("GET", "/api/status", timeout=2),
                                   START_TIMEOUT)
        if why:
            raise ServerError(f"JupyterLab {why} on {self.url}/api/status.\n{self.log_tail()}")

    def api(self, method, path, body=None, timeout=10):
        """Call the server's REST API with our token; the decoded JSON answer (or None)."""
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(self.url + path, data=data, method=method,
                                     headers={"Authorization": f"token {self.token}",
                                              "Content-Type": "application/json"})
        with urllib.request.urlopen(req, timeout=timeout) as resp:
            raw = resp.read()
        return json.loads(raw) if raw else None

    def log_tail(self, lines=LOG_TAIL):
        try:
            text = self.log_path.read_text(errors="replace").splitlines()
        except OSError:
            return "(no server log)"
        return f"last {min(lines, len(text))} lines of {self.log_path}:\n" + \
            "\n".join(text[-lines:])

    def shutdown_kernels(self):
        """End every kernel (between tests: 2 cores do not carry idle kernels well)."""
        self._remember_tree()
        try:
            for kernel in self.api("GET", "/api/kernels") or []:
                self.api("DELETE", f"/api/kernels/{kernel['id']}", timeout=20)
        except (OSError, urllib.error.URLError, ValueError):
            pass            # the server is going away anyway; stop() cleans up

    def _remember_tree(self):
        if self.proc is not None and self.proc.poll() is None:
            self._tree.update(descendants(self.proc.pid))

    def stop(self):
        """Shut down kernels and server; kill leftovers by pid.  Idempotent."""
        proc, self.proc = self.proc, None
        if proc is not None:
            self._tree.update(descendants(proc.pid))
            if proc.poll() is None:
                try:     # the polite way: the server ends its kernels itself
                    self.api("POST", "/api/shutdown", timeout=5)
                except (OSError, urllib.error.URLError, ValueError):
                    pass
                _wait(proc, 15) or _signal_group(proc, signal.SIGTERM)
                _wait(proc, 5) or _signal_group(proc, signal.SIGKILL)
                _wait(proc, 5)
        for pid, started in sorted(self._tree.items()):
            _kill_pid(pid, started)
        self._tree.clear()
        if self._log is not None:
            self._log.close()
            self._log = None


def _wait(proc, seconds):
    try:
        proc.wait(timeout=seconds)
        return True
    except subprocess.TimeoutExpired:
        return False


def _signal_group(proc, sig):
    try:
        os.killpg(proc.pid, sig)        # its own session: the group is the server's tree
    except (ProcessLookupError, PermissionError):
        pass


def _kill_pid(pid, started):
    # Only the very process we saw under the server: a pid whose start time differs
    # was reused by someone else after ours ended.
    if _stat(pid) is None or _stat(pid)[1] != started:
        return
    try:
        os.kill(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def _stat(pid):
    """``(ppid, start time)`` of ``pid`` from /proc, or None when it is gone."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            stat = f.read()
    except OSError:
        return None
    # "pid (comm) state ppid ... starttime(22nd field)": comm may hold spaces and ")"
    fields = stat.rsplit(")", 1)[1].split()
    return int(fields[1]), int(fields[19])


def descendants(pid):
    """``{pid: start time}`` of the processes under ``pid`` (Linux /proc; empty elsewhere).

    Kernels run in sessions of their own, so killing the server's process group does
    not reach them; they are collected here while the server still lives.

    >>> import subprocess, sys
    >>> child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    >>> child.pid in descendants(os.getpid())
    True
    >>> child.kill(); child.wait() != 0
    True
    """
    children = {}
    try:
        entries = [int(e) for e in os.listdir("/proc") if e.isdigit()]
    except OSError:
        return {}
    for p in entries:
        st = _stat(p)
        if st is not None:
            children.setdefault(st[0], []).append((p, st[1]))
    found, todo = {}, [pid]
    while todo:
        for child, started in children.get(todo.pop(), ()):
            if child not in found:
                found[child] = started
                todo.append(child)
    return found
