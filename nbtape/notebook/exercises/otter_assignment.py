"""A tutorial as an Otter-Grader assignment (the grader most Gradescope courses use).

``otter_version(nb, name)`` writes Otter's master-notebook format: an ``ASSIGNMENT
CONFIG`` cell, then for the exercise one question (named after the answer cell's
``grade_id``, worth the check cells' points) whose solution block is the tutorial's
answer cell with the folded solution after its stub (``# BEGIN SOLUTION NO PROMPT``, so
the student's copy is the tutorial's cell) and whose tests are the strict check calls,
one test case per check cell.  The tutorial's own check cells stay after the question as
the student's self-check.  Then ``otter assign`` and ``otter run`` (no Docker)::

    otter assign COURSE/otter/13_vanishing_gradients/13_vanishing_gradients.ipynb dist
    otter run -a dist/autograder/*.zip -o results submission.ipynb   # results.json

Otter runs its tests in the student's own Python, after the notebook: the verdict is
what the check says there (see docs/teaching.md; nbgrader's course judges outside it).
"""
import copy

from nbformat.v4 import new_code_cell, new_output, new_raw_cell

from .tutorial_cells import (FOLDED, given_lines, is_solution, nbgrader_meta,
                             solution_code, strict)


def _config(name):
    return ("# ASSIGNMENT CONFIG\n"
            f"name: {name}\n"
            "init_cell: false\n"          # the tutorial's own check cells give feedback,
            "check_all_cell: false\n"     # with no otter-grader in the student's Python
            "export_cell: false\n"
            "run_tests: false\n")


def otter_version(nb, name):
    """The tutorial ``nb`` as an Otter master notebook, or None without an exercise.

    >>> import nbformat
    >>> from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook
    >>> answer = new_code_cell("# your code here\\nx = None")
    >>> answer.metadata["nbgrader"] = {"solution": True, "grade": False, "grade_id": "00-answer"}
    >>> test = new_code_cell('nt.exercises.check("00-x", x)')
    >>> test.metadata["nbgrader"] = {"solution": False, "grade": True, "points": 1}
    >>> folded = new_markdown_cell("<details>\\n\\n```python\\nx = 3\\n```\\n</details>")
    >>> folded.metadata["tags"] = ["solution"]
    >>> out = otter_version(new_notebook(cells=[answer, test, folded]), "demo")
    >>> [c.source.splitlines()[0].strip('" ') for c in out.cells]
    ['# ASSIGNMENT CONFIG', '# BEGIN QUESTION', '# BEGIN SOLUTION', '# your code here',
     '# END SOLUTION', '# BEGIN TESTS', '# BEGIN TEST CONFIG', '# END TESTS',
     '# END QUESTION', 'nt.exercises.check("00-x", x)']
    """
    cells = copy.deepcopy(nb.cells)
    answers = [c for c in cells if nbgrader_meta(c).get("solution")]
    solutions = [c for c in cells if is_solution(c)]
    if not answers:
        return None
    if len(answers) != 1 or len(solutions) != 1:
        raise ValueError(f"{name}: one answer cell and one solution cell expected")
    answer = answers[0]
    given_lines(answer.source)              # (checks the cell has its marker line)
    checks = [c for c in cells if nbgrader_meta(c).get("grade") and c.cell_type == "code"]
    points = sum(int(nbgrader_meta(c).get("points", 1)) for c in checks)
    answer.source = (answer.source.rstrip("\n") + "\n# BEGIN SOLUTION NO PROMPT\n"
                     + solution_code(solutions[0]) + "\n# END SOLUTION")
    question = nbgrader_meta(answer).get("grade_id", "answer")
    tests = [new_raw_cell("# BEGIN TESTS")]
    for check in checks:
        # Otter's test is a doctest: the cell's output is what the call must print
        tests.append(new_code_cell(
            '""" # BEGIN TEST CONFIG\n'
            f'points: {int(nbgrader_meta(check).get("points", 1))}\n'
            '""" # END TEST CONFIG\n' + strict(check.source),
            outputs=[new_output("stream", name="stdout", text="correct\n")]))
    tests.append(new_raw_cell("# END TESTS"))
    block = ([new_raw_cell(f"# BEGIN QUESTION\nname: {question}\npoints: {points}\n"
                           "check_cell: false"),
              new_raw_cell("# BEGIN SOLUTION"), answer, new_raw_cell("# END SOLUTION")]
             + tests + [new_raw_cell("# END QUESTION")])
    out = copy.deepcopy(nb)
    out.cells = [new_raw_cell(_config(name))]
    for cell in cells:
        if is_solution(cell):
            continue
        if cell is answer:
            out.cells.extend(block)
            continue
        if cell.cell_type == "markdown":
            cell.source = FOLDED.sub("", cell.source)
        cell.get("metadata", {}).pop("nbgrader", None)
        out.cells.append(cell)
    for cell in out.cells:
        if cell.cell_type == "code" and cell not in tests:
            cell.outputs, cell.execution_count = [], None
    return out
