"""The course as an Otter-Grader assignment: real ``otter assign`` and ``otter run``.

The builder writes ``COURSE/otter/<tutorial>/<tutorial>.ipynb`` in Otter's master-notebook
format; ``otter assign`` makes the student's copy (no solution, the tutorial's stub kept)
and the autograder zip; ``otter run`` (no Docker) grades a submission into Gradescope's
``results.json``: the solution gets every point, a wrong second part loses its point.
"""
import json
import os
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from nbtape.notebook.exercises.course import build
from nbtape.notebook.exercises.otter_assignment import otter_version

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = ROOT / "notebooks"
NAME = "13_vanishing_gradients"


def _otter(*args, cwd):
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        p for p in (str(ROOT), os.environ.get("PYTHONPATH")) if p)}
    done = subprocess.run([sys.executable, "-m", "otter", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    return done


def test_every_tutorial_with_an_exercise_has_one_question():
    for path in sorted(NOTEBOOKS.glob("[0-9]*.ipynb")):
        nb = nbformat.read(path, 4)
        out = otter_version(nb, path.stem)
        answers = [c for c in nb.cells if c.metadata.get("nbgrader", {}).get("solution")]
        if not answers:
            assert out is None
            continue
        raw = [c.source.splitlines()[0] for c in out.cells if c.cell_type == "raw"]
        assert raw.count("# BEGIN QUESTION") == 1 and raw[0] == "# ASSIGNMENT CONFIG"
        text = "\n".join(c.source for c in out.cells)
        assert "<details>" not in text and "below it is one solution" not in text
        assert text.count("strict=True)") == sum(
            1 for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade"))


@pytest.mark.slow
def test_otter_assign_and_run_score_right_and_wrong(tmp_path):
    build(tmp_path / "course", NOTEBOOKS, [NAME[:3]])
    master = tmp_path / "course" / "otter" / NAME / f"{NAME}.ipynb"
    _otter("assign", str(master), str(tmp_path / "dist"), cwd=tmp_path)
    student = nbformat.read(tmp_path / "dist" / "student" / f"{NAME}.ipynb", 4)
    answer = next(c for c in student.cells if "tanh_norms = None" in c.source)
    assert "BEGIN SOLUTION" not in answer.source and "gradient_norms(np.tanh" not in answer.source
    solution = nbformat.read(tmp_path / "dist" / "autograder" / f"{NAME}.ipynb", 4)
    solved = next(c for c in solution.cells if "tanh_norms = None" in c.source).source
    zipped = sorted((tmp_path / "dist" / "autograder").glob("*.zip"))
    assert len(zipped) == 1
    scores = {}
    for label, lines in [("right", solved.replace("closer_to = None", "")),
                         ("wrong", solved.replace('closer_to = "relu"',
                                                  'closer_to = "sigmoid"'))]:
        answer.source = lines
        folder = tmp_path / label
        folder.mkdir()
        nbformat.write(student, folder / f"{NAME}.ipynb")
        _otter("run", "-a", str(zipped[0]), "-o", str(folder), str(folder / f"{NAME}.ipynb"),
               cwd=folder)
        results = json.loads((folder / "results.json").read_text())   # Gradescope's format
        scores[label] = {t["name"]: (t.get("score"), t.get("max_score"))
                         for t in results["tests"] if t.get("max_score")}
    assert scores["right"] == {"13-answer": (2, 2)}
    assert scores["wrong"] == {"13-answer": (1, 2)}
