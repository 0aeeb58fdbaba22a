"""Run a cell magic's body the way IPython runs a cell (and the way ``%%time`` does).

The body is transformed (``!ls``, ``%time`` lines...), parsed, compiled under a
name from ``shell.compile.cache`` so that tracebacks say ``Cell In[n], line k``
and show the source, executed in the user namespace, and its last expression is
evaluated separately so that the magic can return it as ``Out[n]``.

It is deliberately not ``shell.run_cell``: that catches the cell's exception
and reports success to the caller, so "Run All" and notebook runners would
carry on past a failed cell.  Here the exception propagates, and a failing
magic cell fails like any other cell.

Line numbers match what the notebook shows: line 1 is the ``%%magic`` line
itself, so the body's first line is line 2, as in the cell editor.
"""
import ast
import asyncio
import inspect
import traceback

from IPython.core.error import UsageError

from ..diagnostics.errors import without_nbtape_tail


class CompiledCell:
    """A compiled cell body: the statements, the last expression, and facts about them."""

    def __init__(self, filename, body, last, silent, awaits):
        self.filename = filename  # the name tracebacks and the tape's op locations use
        self.body = body          # code of every statement but a trailing expression
        self.last = last          # code of the trailing expression, or None
        self.silent = silent      # the trailing expression ends with ';'
        self.awaits = awaits      # the cell uses top-level await


def compile_cell(shell, magic_line, body):
    """Transform, parse and compile ``body``; a SyntaxError points at the cell's line.

    ``magic_line`` is the cell's first line (``%%tape --watch x``), kept in the
    cached source so that tracebacks show it as line 1.

    >>> from IPython.core.interactiveshell import InteractiveShell
    >>> shell = InteractiveShell.instance()
    >>> cell = compile_cell(shell, "%%tape", "a = 2\\na * 3\\n")
    >>> run_compiled(shell, cell), shell.user_ns.pop("a")
    (6, 2)
    """
    transformed = shell.transform_cell(body)
    filename = shell.compile.cache(f"{magic_line}\n{transformed}", running_cell_number(shell),
                                   raw_code=f"{magic_line}\n{body}")
    # The leading newline stands for the magic line, so line numbers match the cell.
    source = "\n" + transformed
    tree = shell.transform_ast(shell.compile.ast_parse(source, filename=filename))
    statements = list(tree.body)
    last = silent = None
    if statements and isinstance(statements[-1], ast.Expr):
        expr = statements.pop().value
        silent = _ends_with_semicolon(source, expr)
        last = ast.Expression(expr)
    flags = ast.PyCF_ALLOW_TOP_LEVEL_AWAIT if shell.autoawait else 0
    with shell.compile.extra_flags(flags):
        body_code = shell.compile(ast.Module(statements, []), filename, "exec")
        last_code = shell.compile(last, filename, "eval") if last is not None else None
    awaits = any(c is not None and c.co_flags & inspect.CO_COROUTINE
                 for c in (body_code, last_code))
    return CompiledCell(filename, body_code, last_code, bool(silent), awaits)


def running_cell_number(shell):
    """The number of the cell being run, the ``N`` of its ``In[N]``.

    ``shell.execution_count`` is that number during a cell up to IPython 9.7, but
    from 9.8 on IPython advances it before running the cell, so inside a cell it
    already names the next one.  The ``ExecutionResult`` of the running cell
    (which the display hook holds while the cell runs) carries the right number on
    every version; outside a cell, or in a cell kept out of the history, the
    counter is all there is.

    >>> from IPython.core.interactiveshell import InteractiveShell
    >>> shell = InteractiveShell.instance()
    >>> running_cell_number(shell) == shell.execution_count      # not inside a cell
    True
    """
    result = getattr(shell.displayhook, "exec_result", None)
    number = getattr(result, "execution_count", None)
    return number if number is not None else shell.execution_count


def _ends_with_semicolon(source, expr):
    """True when the text after the expression starts with ';' (IPython's "silence")."""
    lines = source.splitlines()
    # end_col_offset counts UTF-8 bytes, not characters
    tail = lines[expr.end_lineno - 1].encode("utf-8")[expr.end_col_offset:].decode("utf-8")
    rest = "\n".join([tail] + lines[expr.end_lineno:])
    return rest.lstrip().startswith(";")


def syntax_error_text(magic, exc):
    """A syntax error in the cell as a short message: line, caret and what is wrong.

    >>> try:
    ...     compile("\\ny = x *\\n", "<cell>", "exec")
    ... except SyntaxError as e:
    ...     print(syntax_error_text("%%tape", e))
    %%tape: the cell has a syntax error at line 2:
        y = x *
               ^
    SyntaxError: invalid syntax
    """
    lines = traceback.format_exception_only(type(exc), exc)
    if lines and lines[0].lstrip().startswith("File "):
        lines = lines[1:]       # the cache's file name means nothing to the learner
    # Python 3.13 raises a private subclass, _IncompleteInputError, when the cell ends
    # in the middle of a statement: name the documented class, and say what is missing.
    name = type(exc).__name__
    public = next(c for c in type(exc).__mro__ if not c.__name__.startswith("_")).__name__
    last = lines[-1].rstrip("\n")
    if last.startswith(name):
        last = public + last[len(name):]
    if exc.msg == "incomplete input":
        last += (" (the cell ends in the middle of a statement: a bracket, a string or "
                 "a block is still open)")
    lines[-1] = last
    where = f" at line {exc.lineno}" if exc.lineno else ""
    return f"{magic}: the cell has a syntax error{where}:\n" + "".join(lines).rstrip("\n")


def check_runnable(cell):
    """Raise a short ``UsageError`` when the cell awaits and no loop can be started.

    In a Jupyter kernel the cell already runs inside the kernel's event loop, and
    a magic (which is synchronous) cannot wait on that loop, so top-level
    ``await`` is only possible where no loop is running (terminal IPython, tests).

    >>> check_runnable(CompiledCell("<cell>", None, None, False, awaits=False))
    """
    if not cell.awaits:
        return
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return
    raise UsageError(
        "%%tape does not support top-level `await` in a notebook: the kernel's event "
        "loop is already running this cell, so %%tape cannot wait on it. Await in a cell "
        "of its own and record with `with nt.GradientTape() as tape:` there, or move the "
        "tensor code out of the async part of this cell.")


def run_compiled(shell, cell):
    """Execute a compiled cell in the user namespace; the last expression's value.

    ``None`` when the cell has no trailing expression or silences it with ';'.
    """
    glob, loc = shell.user_global_ns, shell.user_ns
    value = None
    for code in (cell.body, cell.last):
        if code is None:
            continue
        # eval (not exec) returns the coroutine of a cell with top-level await
        value = eval(code, glob, loc)
        if code.co_flags & inspect.CO_COROUTINE:
            value = shell.loop_runner(value)
    return None if cell.silent else value


def names_used(cell):
    """Every global name the cell's code reads or binds (also inside its functions).

    >>> from IPython.core.interactiveshell import InteractiveShell
    >>> sorted(names_used(compile_cell(InteractiveShell.instance(), "%%tape",
    ...                                "f = lambda: np.sin(w)\\nz = f()")))
    ['f', 'np', 'sin', 'w', 'z']
    """
    names, todo = set(), [c for c in (cell.body, cell.last) if c is not None]
    while todo:
        code = todo.pop()
        names.update(code.co_names)
        todo.extend(c for c in code.co_consts if hasattr(c, "co_names"))
    return names


def cell_traceback(tb, filename):
    """The traceback from the cell's own frame on (drops the frames that ran it).

    ``None`` when the exception never reached the cell's code.
    """
    while tb is not None and tb.tb_frame.f_code.co_filename != filename:
        tb = tb.tb_next
    return tb


def failing_line(exc, filename):
    """The cell line where ``exc`` left the cell's own code, or ``None``."""
    tb = cell_traceback(exc.__traceback__, filename)
    line = None
    while tb is not None:
        if tb.tb_frame.f_code.co_filename == filename:
            line = tb.tb_lineno
        tb = tb.tb_next
    return line


def point_at_user(shell, exc, filename):
    """Make IPython show ``exc`` from the user's cell line, not from the magic's frames.

    IPython renders an exception through its ``_render_traceback_`` when it has
    one, so the exception itself (its type, ``%debug``, ``sys.last_value``) stays
    what the cell raised; only the picture starts at the cell.
    """
    tb = cell_traceback(exc.__traceback__, filename)
    own = getattr(getattr(exc, "_render_traceback_", None), "nbtape", False)
    if tb is None or (hasattr(exc, "_render_traceback_") and not own):
        return
    # nbtape's entry points also leave out the frame that re-raised their error
    tb = without_nbtape_tail(tb)

    def render():
        return shell.InteractiveTB.structured_traceback(type(exc), exc, tb, tb_offset=0)
    render.nbtape = True
    try:
        exc._render_traceback_ = render
    except (AttributeError, TypeError):
        pass      # an exception type without a __dict__: the full traceback it is
