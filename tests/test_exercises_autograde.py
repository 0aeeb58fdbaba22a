"""Cheating submissions get no marks: real ``nbgrader autograde`` with the course's config.

The course builder's ``nbgrader_config.py`` puts ``autograde.GradeHandedIn`` after
nbgrader's ``Execute``: each check cell's verdict comes from a fresh Python that judges
the answer the cell handed in.  Each cheat below sits in the answer cell with a wrong
answer and patches what the old, in-kernel check trusted (the checker, its module,
numpy's comparisons, builtins, the import system, IPython's traceback); every one gets
0, and the source notebooks (the reference answers) get every mark.
"""
import os
from pathlib import Path

import nbformat
import pytest
from traitlets.config.loader import PyFileConfigLoader

from nbtape.notebook.exercises.autograde import exercise_of, handed_in, verdict_outputs
from nbtape.notebook.exercises.course import build, given_lines
from nbtape.notebook.exercises.feedback import Feedback

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = ROOT / "notebooks"

# name: (lines put before the wrong answer in the answer cell)
CHEATS = {
    "checker": 'nt.exercises.check = lambda *a, **k: print("correct")',
    "its module": ("import nbtape.notebook.exercises.catalogue as _c\n"
                   "_c.feedback = lambda *a, **k: _c.Feedback(True)"),
    "numpy's comparisons": ("np.allclose = np.isclose = np.array_equal = "
                            "lambda *a, **k: True"),
    "builtins": ("import builtins, math\n"
                 "builtins.abs = lambda v: -math.fabs(v)"),
    "the import system": ("import sys, types\n"
                          "_fake = types.ModuleType('nbtape')\n"
                          "_fake.exercises = types.SimpleNamespace(\n"
                          "    check=lambda *a, **k: print('correct'))\n"
                          "sys.modules['nbtape'] = _fake\n"
                          "import nbtape as nt"),
    "IPython's traceback": "get_ipython().showtraceback = lambda *a, **k: None",
    "a forged hand-in": ("from nbtape.notebook.exercises import handin as _h\n"
                         "_h.hand_in = lambda id, args: None"),
}
FUNCTION_CHEAT = ("def fixed_loss(w):\n"
                  "    import nbtape.notebook.exercises.early as _e\n"
                  "    _e.compare = lambda *a, **k: None\n"
                  "    return w\n")
# what JupyterLite's and Colab's downloads put in a notebook's metadata
BROWSERS = {
    "jupyterlite": {"kernelspec": {"name": "python", "display_name": "Python (Pyodide)",
                                   "language": "python"},
                    "language_info": {"name": "python", "version": "3.12.1",
                                      "mimetype": "text/x-python",
                                      "file_extension": ".py"}},
    "colab": {"kernelspec": {"name": "python3", "display_name": "Python 3"},
              "colab": {"provenance": [], "toc_visible": True}},
}
# assignment: (the wrong answer, its points)
WRONG = {
    "13_vanishing_gradients": ("_right = gradient_norms(np.tanh, weights(1.0))\n"
                               "tanh_orders = np.log10(_right[0] / _right[-1])\n"
                               "tanh_norms = gradient_norms(np.tanh, weights(2.0))\n"
                               'closer_to = "sigmoid"', 2),
    "05_why_is_my_gradient_none": ("def fixed_loss(w):\n"
                                   "    return np.mean((w * data - targets) ** 2)", 1),
}


@pytest.fixture(scope="module")
def course(tmp_path_factory):
    """The course for WRONG's tutorials, with the nbgrader config the builder writes."""
    from nbgrader.apps import NbGraderAPI

    root = tmp_path_factory.mktemp("course")
    names = build(root, NOTEBOOKS, [n[:3] for n in WRONG])
    assert sorted(names) == sorted(WRONG)
    config = PyFileConfigLoader("nbgrader_config.py", path=str(root)).load_config()
    config.CourseDirectory.root = str(root)
    api = NbGraderAPI(config=config)
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("PYTHONPATH", os.pathsep.join(
            p for p in (str(ROOT), os.environ.get("PYTHONPATH")) if p))
        for name in names:
            result = api.generate_assignment(name, force=True)
            assert result["success"], result.get("error")
        yield root, api


def _with_answer(root, name, lines):
    nb = nbformat.read(root / "release" / name / f"{name}.ipynb", 4)
    cell = next(c for c in nb.cells if c.metadata.get("nbgrader", {}).get("solution"))
    cell.source = given_lines(cell.source) + lines
    return nb


def _scores(root, api, submissions):
    from nbgrader.api import Gradebook
    for (name, student), nb in submissions.items():
        folder = root / "submitted" / student / name
        folder.mkdir(parents=True, exist_ok=True)
        nbformat.write(nb, folder / f"{name}.ipynb")
        result = api.autograde(name, student, force=True, create=True)
        assert result["success"], result.get("error")
    with Gradebook(f"sqlite:///{root / 'gradebook.db'}") as gradebook:
        return {key: gradebook.find_submission(*key).score for key in submissions}


@pytest.mark.slow
@pytest.mark.filterwarnings("ignore::sqlalchemy.exc.SAWarning")   # nbgrader's own sessions
def test_cheats_with_a_wrong_answer_get_nothing_and_the_references_everything(course):
    root, api = course
    submissions = {}
    for name, (wrong, points) in WRONG.items():
        submissions[(name, "reference")] = nbformat.read(
            root / "source" / name / f"{name}.ipynb", 4)
        submissions[(name, "wrong")] = _with_answer(root, name, wrong)
    # a notebook worked in JupyterLite or Colab and downloaded: its own kernelspec and
    # metadata, the same assignment
    for where, metadata in BROWSERS.items():
        nb = nbformat.read(root / "source" / "05_why_is_my_gradient_none"
                           / "05_why_is_my_gradient_none.ipynb", 4)
        nb.metadata.update(metadata)
        for c in nb.cells:
            c.metadata.update({"id": f"{where}-{id(c)}"} if where == "colab" else {})
        submissions[("05_why_is_my_gradient_none", where)] = nb
    # the answer's own code reaching into the judge, in the fresh Python
    submissions[("05_why_is_my_gradient_none", "cheat-in-the-function")] = _with_answer(
        root, "05_why_is_my_gradient_none", FUNCTION_CHEAT)
    for i, cheat in enumerate(CHEATS.values()):
        for name, (wrong, _) in WRONG.items():
            submissions[(name, f"cheat{i}")] = _with_answer(root, name, cheat + "\n" + wrong)
    scores = _scores(root, api, submissions)
    for where in BROWSERS:
        assert scores[("05_why_is_my_gradient_none", where)] == 1, where
    assert scores[("05_why_is_my_gradient_none", "cheat-in-the-function")] == 0
    for name, (_, points) in WRONG.items():
        assert scores[(name, "reference")] == points, name
        assert scores[(name, "wrong")] == 0, name
        for i, cheat in enumerate(CHEATS):
            assert scores[(name, f"cheat{i}")] == 0, (name, cheat)
    # numpy's comparisons patched: the answer is handed in and judged as it is
    graded = nbformat.read(root / "autograded" / "cheat2" / "13_vanishing_gradients"
                           / "13_vanishing_gradients.ipynb", 4)
    said = [o.get("evalue", "") for c in graded.cells for o in c.get("outputs", [])]
    assert "13-closer-to: not yet: not that one: compare tanh_orders with log10(first / " \
           "last) of the sigmoid's and ReLU's norms" in said


def test_a_check_cell_is_known_by_its_source_and_its_metadata():
    cell = nbformat.v4.new_code_cell('nt.exercises.check("09-buggy", buggy, strict=True)')
    assert exercise_of(cell) is None                      # not a graded cell
    cell.metadata["nbgrader"] = {"grade": True, "solution": False, "points": 1}
    assert exercise_of(cell) == "09-buggy"
    cell.source = 'nt.exercises.check("09-buggy", buggy)'
    assert exercise_of(cell) is None                      # not strict: not handed in
    cell.source = 'nt.exercises.check("09-buggy", buggy, strict=True)\nprint(1)'
    assert exercise_of(cell) is None


def test_the_verdict_uses_the_courses_data_never_the_hand_ins(tmp_path):
    """GradeHandedIn reads the course's graded data from the teacher's file; data that a
    forged hand-in carries for the check is dropped."""
    from nbtape.notebook.exercises.autograde import GradeHandedIn
    from nbtape.notebook.exercises.handin import MIME
    from nbtape.notebook.exercises.variants import write

    graded = write(tmp_path, seed=3)
    cell = nbformat.v4.new_code_cell('nt.exercises.check("10-checkpoint-segment", segment, '
                                     'strict=True)')
    cell.metadata["nbgrader"] = {"grade": True, "solution": False, "points": 1}
    # what the self-check accepts, case by case (its cases ship with nbtape)
    table = {(400, 40): 20, (400, 45): 20, (100, 25): 10, (1000, 63): None, (1000, 70): 28,
             (50, 14): None, (400, 39): None, (7, 6): 2}
    source = f"def segment(length, memory):\n    return {table!r}.get((length, memory))\n"
    forged = {"id": "10-checkpoint-segment",
              "args": [{"$code": "segment", "source": source, "names": {}}],
              "graded": {"cases": [[400, 40]]}}
    cell.outputs = [nbformat.v4.new_output("display_data", data={MIME: forged})]
    shipped = GradeHandedIn().preprocess_cell(nbformat.v4.new_code_cell(**{
        k: cell[k] for k in ("source", "metadata", "outputs")}), {}, 0)[0]
    assert shipped.outputs[0].output_type == "stream"     # the self-check's data: remembered
    judged = GradeHandedIn(graded=str(graded)).preprocess_cell(cell, {}, 0)[0]
    assert judged.outputs[0].output_type == "error", judged.outputs
    assert "10-checkpoint-segment: not yet" in judged.outputs[0].evalue


def test_a_course_without_its_graded_data_stops_before_grading(tmp_path):
    from traitlets.config import Config

    from nbtape.notebook.exercises.autograde import configure
    with pytest.raises(FileNotFoundError, match="course build COURSE_DIR"):
        configure(Config(), graded=tmp_path / "nbtape_graded.json")


def test_only_the_answer_for_the_cells_exercise_counts():
    from nbtape.notebook.exercises.handin import MIME
    cell = nbformat.v4.new_code_cell("")
    cell.outputs = [nbformat.v4.new_output("display_data", data={MIME: {"id": "09-buggy",
                                                                        "args": ["swish"]}}),
                    nbformat.v4.new_output("display_data", data={MIME: {"id": "13-closer-to",
                                                                        "args": ["relu"]}})]
    assert handed_in(cell, "09-buggy")["args"] == ["swish"]
    assert handed_in(cell, "05-fixed-loss") is None
    outputs = verdict_outputs("09-buggy", Feedback(False, "not that one"))
    assert outputs[0].output_type == "error"
