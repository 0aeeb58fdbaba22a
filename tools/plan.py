"""The three-week plan of the unit as data: which tutorials each week takes, in order.

docs/teaching.md explains the plan to a teacher (what is done in class, what is
homework, what is optional); this is the one list that code reads, so the weekly
slide decks (``tools/decks.py``) and anything else that needs "the notebooks of
week 2" agree with each other.

A tutorial is named here by its file name without its number and suffix
(``the_tape_magic`` for ``14_the_tape_magic.ipynb``): renumbering a notebook to
move it along the path keeps it in its week; renaming its words means editing
this list (``tests/test_plan.py`` then says which name is missing).
"""
import re
from pathlib import Path

NOTEBOOKS = Path(__file__).resolve().parent.parent / "notebooks"
_NUMBERED = re.compile(r"^(\d+[a-z]?)_(.+)\.ipynb$")

# Each week in the order of the path (every notebook's Next link): docs/teaching.md says
# which are done in class, which are homework and which are optional (tests/test_plan.py
# checks that its week paragraphs link these, in this order).
WEEKS = (
    # week 1: 1, 2, 3, 3b and the magic (3c) in class; 3d (optional), 4 and 4b as homework
    ("what_is_autodiff", "a_tape_from_scratch", "gradient_tape_basics", "broadcasting",
     "the_tape_magic", "more_of_the_tape_magic", "control_flow_and_higher_order", "kinks"),
    # week 2: None and NaN gradients, custom gradients, forward and reverse mode
    ("why_is_my_gradient_none", "why_is_my_gradient_nan", "nan_from_a_softmax",
     "custom_gradients", "your_own_derivative", "forward_and_reverse_mode", "forward_mode",
     "vjp_jvp_and_hvp"),
    # week 3: checking gradients, memory, training, then tracing (optional) and the project
    ("gradient_checking", "the_memory_cost_of_reverse_mode", "fitting_a_line",
     "appendix_the_guides_printout", "training_a_network", "vanishing_gradients",
     "tracing_a_step"),
)


class PlanError(LookupError):
    """The plan and the notebooks folder disagree; the message says how."""


def name_of(path):
    """A tutorial's name in the plan: its file name without number and suffix.

    >>> name_of("notebooks/14b_more_of_the_tape_magic.ipynb")
    'more_of_the_tape_magic'
    >>> name_of("contents.ipynb") is None
    True
    """
    m = _NUMBERED.match(Path(path).name)
    return m.group(2) if m else None


def tutorials_of_week(week, folder=NOTEBOOKS, weeks=WEEKS):
    """The paths of week ``week``'s tutorials (weeks count from 1), in the plan's order.

    >>> [p.name for p in tutorials_of_week(1)][:3]
    ['01_what_is_autodiff.ipynb', '02_a_tape_from_scratch.ipynb', '03_gradient_tape_basics.ipynb']
    """
    if not 1 <= week <= len(weeks):
        raise PlanError(f"the plan has weeks 1 to {len(weeks)}, not week {week}")
    found = {}
    for path in sorted(Path(folder).glob("[0-9]*.ipynb")):
        found.setdefault(name_of(path), []).append(path)
    paths = []
    for name in weeks[week - 1]:
        match = found.get(name, [])
        if len(match) != 1:
            what = "no notebook" if not match else ", ".join(p.name for p in match)
            raise PlanError(
                f"week {week} of the plan names the tutorial '{name}', and {folder} holds "
                f"{what} called NN_{name}.ipynb: rename the entry in tools/plan.py's WEEKS "
                "to the notebook's new name (its file name without number and suffix)")
        paths.append(match[0])
    return paths


def unplanned(folder=NOTEBOOKS, weeks=WEEKS):
    """File names of the tutorials in ``folder`` that no week of the plan takes.

    >>> unplanned()
    []
    """
    planned = {name for week in weeks for name in week}
    return [p.name for p in sorted(Path(folder).glob("[0-9]*.ipynb"))
            if name_of(p) not in planned]
