"""The tutorials' exercise cells, read: answer cells, check cells, folded solutions.

A tutorial's answer cell carries nbgrader's ``solution`` metadata and a ``# your code
here`` line after what it gives; its check cells carry ``grade``; its solution is a
markdown cell tagged ``solution`` (a ``<details>`` block whose last ``python`` block is
the code).  ``course`` (nbgrader) and ``otter_assignment`` (Otter-Grader) build on these.
"""
import re

import nbformat

from .learner_copy import FOLDED, is_solution  # noqa: F401 (read from here too)

MARKER = "# your code here"
_CODE = re.compile(r"```python\n(.*?)```", re.S)


def nbgrader_meta(cell):
    """The cell's nbgrader metadata (``{}`` for a cell nbgrader does not grade).

    >>> nbgrader_meta(nbformat.v4.new_code_cell("x = 1"))
    {}
    """
    return cell.get("metadata", {}).get("nbgrader", {})


def solution_code(cell):
    """The code a solution cell gives for the answer cell: its last ``python`` block
    (an earlier block may show a change to another cell, such as a ``%%tape`` line).

    >>> solution_code(nbformat.v4.new_markdown_cell("<details>\\n\\n```python\\nx = 1\\n```\\n"))
    'x = 1'
    """
    blocks = _CODE.findall(cell.source)
    if not blocks:
        raise ValueError(f"a solution cell has no ```python block:\n{cell.source}")
    return blocks[-1].strip("\n")


def given_lines(source):
    """The lines of an answer cell before its ``# your code here`` line (kept as given).

    >>> given_lines("w = 1\\n# your code here\\nanswer = None")
    'w = 1\\n'
    """
    lines = source.splitlines(keepends=True)
    for i, line in enumerate(lines):
        if line.lstrip().lower().startswith(MARKER):
            return "".join(lines[:i])
    raise ValueError(f"an answer cell has no {MARKER!r} line:\n{source}")


def strict(source):
    """A check call made strict: ``check(...)`` becomes ``check(..., strict=True)``.

    >>> strict('nt.exercises.check("03-gradient", answer)')
    'nt.exercises.check("03-gradient", answer, strict=True)'
    """
    body = source.rstrip()
    if not re.fullmatch(r"nt\.exercises\.check\(.*\)", body, re.S):
        raise ValueError(f"a check cell should end with the check call:\n{source}")
    return body[:-1] + ", strict=True)"
