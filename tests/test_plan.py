"""The three-week plan as data (``tools/plan.py``): every tutorial is in exactly one week,
and a week's notebooks are found by their names without numbers, so renumbering a
tutorial keeps it in its week while a renamed one is reported with the fix."""
import doctest
import importlib.util
import shutil
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = ROOT / "notebooks"

_spec = importlib.util.spec_from_file_location("plan", ROOT / "tools" / "plan.py")
plan = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(plan)


def _magic(folder):
    # found by its words, whatever its number (the magic may move along the path)
    return next(p for p in Path(folder).glob("[0-9]*.ipynb") if plan.name_of(p) == "the_tape_magic")


def test_every_tutorial_is_in_exactly_one_week():
    names = [name for week in plan.WEEKS for name in week]
    assert len(names) == len(set(names)), "a tutorial is planned twice"
    assert plan.unplanned() == [], "put these tutorials into a week of tools/plan.py's WEEKS"
    found = [p.name for week in range(1, len(plan.WEEKS) + 1)
             for p in plan.tutorials_of_week(week)]
    assert sorted(found) == sorted(p.name for p in NOTEBOOKS.glob("[0-9]*.ipynb"))


def test_the_first_week_starts_with_notebook_1_and_takes_the_magic_after_3():
    week1 = [p.name for p in plan.tutorials_of_week(1)]
    assert week1[0].startswith("01_")
    k = next(i for i, name in enumerate(week1) if name.startswith("03_"))
    # 3, then its broadcasting appendix 3b, then the magic (3c): before notebook 4
    assert [plan.name_of(n) for n in week1[k + 1:k + 3]] == ["broadcasting", "the_tape_magic"]


def test_the_teachers_page_plans_the_same_weeks_in_the_same_order():
    import re
    text = (ROOT / "docs" / "teaching.md").read_text()
    for week in range(1, len(plan.WEEKS) + 1):
        para = re.search(rf"^- \*\*Week {week}\b.*?(?=^- \*\*Week|^#|\Z)", text,
                         re.S | re.M).group(0)
        linked = re.findall(r"\(\.\./notebooks/([^)]+\.ipynb)\)", para)
        assert linked == [p.name for p in plan.tutorials_of_week(week)], f"week {week}"


def test_a_renumbered_tutorial_stays_in_its_week(tmp_path):
    for path in NOTEBOOKS.glob("[0-9]*.ipynb"):
        shutil.copy(path, tmp_path / path.name)
    _magic(tmp_path).rename(tmp_path / "99z_the_tape_magic.ipynb")
    week1 = [p.name for p in plan.tutorials_of_week(1, tmp_path)]
    k = next(i for i, name in enumerate(week1) if name.startswith("03_"))
    assert week1[k + 2] == "99z_the_tape_magic.ipynb"      # after 3 and 3b, as before


def test_a_renamed_tutorial_is_reported_with_the_fix(tmp_path):
    for path in NOTEBOOKS.glob("[0-9]*.ipynb"):
        shutil.copy(path, tmp_path / path.name)
    _magic(tmp_path).rename(tmp_path / "14_magic.ipynb")
    with pytest.raises(plan.PlanError, match="'the_tape_magic'.*tools/plan.py"):
        plan.tutorials_of_week(1, tmp_path)
    assert plan.unplanned(tmp_path) == ["14_magic.ipynb"]
    with pytest.raises(plan.PlanError, match="weeks 1 to 3"):
        plan.tutorials_of_week(4)


def test_the_scripts_examples_run():
    # tools/ is not among pytest's doctest paths
    result = doctest.testmod(plan)
    assert result.attempted >= 2 and result.failed == 0
