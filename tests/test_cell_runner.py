"""Running a cell magic's body like IPython runs a cell (nbtape.notebook.cell_runner)."""
import asyncio
import linecache

import IPython
import pytest
from IPython.core.error import UsageError
from IPython.core.interactiveshell import InteractiveShell

from nbtape.notebook import cell_runner as cr


@pytest.fixture
def shell():
    sh = InteractiveShell.instance()
    sh.run_line_magic("colors", "nocolor")
    added = []
    yield sh, added
    for k in added:
        sh.user_ns.pop(k, None)


def test_cached_source_numbers_lines_like_the_cell(shell):
    sh, added = shell
    cell = cr.compile_cell(sh, "%%tape --watch x", "a_cr = 1\nb_cr = a_cr + 1\n")
    added += ["a_cr", "b_cr"]
    assert linecache.getline(cell.filename, 1) == "%%tape --watch x\n"
    assert linecache.getline(cell.filename, 3) == "b_cr = a_cr + 1\n"
    assert cr.run_compiled(sh, cell) is None and sh.user_ns["b_cr"] == 2
    n = sh.execution_count
    if IPython.version_info[0] < 8:
        assert cell.filename.startswith(f"<ipython-input-{n}-")
    else:
        assert sh.compile.format_code_name(cell.filename)[1] == f"In[{n}]"


def test_the_running_cells_number_is_its_own(shell):
    # IPython 9.8 and later advance execution_count before the cell runs
    sh, added = shell
    sh.user_ns["number_cr"] = lambda: cr.running_cell_number(sh)
    added.append("number_cr")
    n = sh.execution_count
    assert sh.run_cell("number_cr()", store_history=True).result == n
    assert sh.execution_count == n + 1
    assert sh.run_cell("number_cr()", store_history=False).result == n + 1


@pytest.mark.parametrize("body, value", [
    ("1 + 1", 2),
    ("x_cr = 5\nx_cr * 2", 10),
    ("x_cr = 5\nx_cr * 2;", None),
    ("x_cr = 5\nx_cr * 2  ;  # quiet", None),
    ("x_cr = 5\nx_cr * 2  # a ; in a comment", 10),
    ("s_cr = 'é'\nlen(s_cr);", None),
    ("s_cr = 'é'\n(s_cr + ';')", "é;"),
    ("x_cr = 5", None),
    ("(1 +\n 2)\n", 3),
])
def test_last_expression_and_semicolon(shell, body, value):
    sh, added = shell
    added += ["x_cr", "s_cr"]
    assert cr.run_compiled(sh, cr.compile_cell(sh, "%%tape", body)) == value


def test_ipython_syntax_is_transformed(shell):
    sh, added = shell
    added.append("y_cr")
    cell = cr.compile_cell(sh, "%%tape", "y_cr = 3\n%alias_magic -h\ny_cr")
    assert "run_line_magic" in linecache.getline(cell.filename, 3)


def test_syntax_error_lines_count_the_magic_line(shell):
    sh, _ = shell
    with pytest.raises(SyntaxError) as info:
        cr.compile_cell(sh, "%%tape", "a = 1\nb = (\n")
    assert info.value.lineno == 3
    text = cr.syntax_error_text("%%tape", info.value)
    assert text.startswith("%%tape: the cell has a syntax error at line 3:")
    assert "File" not in text and "SyntaxError" in text


def test_traceback_starts_at_the_cell(shell):
    sh, added = shell
    added.append("f_cr")
    sh.user_ns["f_cr"] = lambda: 1 / 0
    cell = cr.compile_cell(sh, "%%tape", "q = 1\nf_cr()\n")
    try:
        cr.run_compiled(sh, cell)
    except ZeroDivisionError as e:
        exc = e
    tb = cr.cell_traceback(exc.__traceback__, cell.filename)
    assert tb.tb_frame.f_code.co_filename == cell.filename and tb.tb_lineno == 3
    assert cr.failing_line(exc, cell.filename) == 3
    cr.point_at_user(sh, exc, cell.filename)
    text = sh.InteractiveTB.stb2text(exc._render_traceback_())
    assert "nbtape/notebook" not in text and "----> 3 f_cr()" in text and "<lambda>" in text


def test_point_at_user_leaves_foreign_and_custom_exceptions_alone(shell):
    sh, _ = shell
    foreign = ValueError("raised elsewhere")
    cr.point_at_user(sh, foreign, "<no such cell>")
    assert not hasattr(foreign, "_render_traceback_")

    class Custom(Exception):
        def _render_traceback_(self):
            return ["mine"]
    cell = cr.compile_cell(sh, "%%tape", "raise C_cr()\n")
    sh.user_ns["C_cr"] = Custom
    try:
        cr.run_compiled(sh, cell)
    except Custom as e:
        cr.point_at_user(sh, e, cell.filename)
        assert e._render_traceback_() == ["mine"]
    finally:
        sh.user_ns.pop("C_cr")


def test_await_runs_without_a_loop_and_is_refused_inside_one(shell):
    sh, added = shell
    added += ["asyncio", "r_cr"]
    cell = cr.compile_cell(sh, "%%tape", "import asyncio\nr_cr = await asyncio.sleep(0, 7)\n"
                                          "r_cr + 1")
    assert cell.awaits
    cr.check_runnable(cell)
    assert cr.run_compiled(sh, cell) == 8

    async def inside():
        cr.check_runnable(cell)
    with pytest.raises(UsageError, match="top-level `await`"):
        asyncio.run(inside())
    plain = cr.compile_cell(sh, "%%tape", "1")
    assert not plain.awaits

    async def inside_plain():
        cr.check_runnable(plain)       # no await: fine inside a kernel's loop
        return True
    assert asyncio.run(inside_plain())


def test_without_autoawait_await_is_a_syntax_error(shell):
    sh, _ = shell
    sh.autoawait = False
    try:
        with pytest.raises(SyntaxError):
            cr.compile_cell(sh, "%%tape", "await f()\n")
    finally:
        sh.autoawait = True
