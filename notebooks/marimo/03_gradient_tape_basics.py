import marimo

__generated_with = "0.25.2"
app = marimo.App(width="medium")


@app.cell
def _():
    import marimo as mo
    import numpy as np
    import nbtape as nt
    return mo, np, nt


@app.cell
def _(mo):
    mo.md(r"""
    # 3. Gradients with a tape (the marimo edition)

    **Goal:** compute gradients with `nt.GradientTape`. Record a computation, then play it
    back in reverse to get derivatives, exactly as TensorFlow's `tf.GradientTape` does,
    with numpy in place of `tf`. This is tutorial 3 of `notebooks/` as a marimo notebook:
    `marimo edit notebooks/marimo/03_gradient_tape_basics.py` (`pip install "nbtape[marimo]"`).

    A tape works like an editor's undo history. Inside the `with` block it *records* every
    operation on watched values, in order. `tape.gradient(target, sources)` then walks that
    record *backwards*, newest operation first, as pressing Ctrl+Z again and again would. At
    each operation it applies the chain rule. (In marimo a name belongs to one cell, so
    names used in one cell only start with `_`.)
    """)
    return


@app.cell
def _(mo):
    mo.md(r"""
    ## A Variable is watched automatically

    `nt.Variable` holds a value you will train. Reading it inside a tape is recorded
    without any extra call. For $y = x^3$, $dy/dx = 3x^2$: 3 at $x = 1$ and 27 at $x = 3$.
    """)
    return


@app.cell
def _(mo, nt):
    _lines = []
    for _value in [1.0, 3.0]:
        _x = nt.Variable(_value)
        with nt.GradientTape() as _tape:
            _y = _x ** 3
        _lines.append(f"x = {_value}: dy/dx = {float(_tape.gradient(_y, _x))}")
    mo.md("\n\n".join(_lines))
    return


@app.cell
def _(mo):
    mo.md(r"""
    ## Constants must be watched

    `nt.constant` values are not trainable, so the tape ignores them unless you call
    `tape.watch`. Here $y = \sum x$ over a 2×2 matrix of ones and $z = y^2$, so
    $dz/dx_{ij} = 2y = 8$ for every element; the gradient has the shape of `x`.
    """)
    return


@app.cell
def _(np, nt):
    _x = nt.constant(np.ones((2, 2)))
    with nt.GradientTape() as _tape:
        _tape.watch(_x)
        _y = np.sum(_x)
        _z = _y * _y
    _tape.gradient(_z, _x).numpy()
    return


@app.cell
def _(mo):
    mo.md(r"""
    ## Several gradients need a persistent tape

    A tape frees what it recorded after its first `gradient` call. Ask for
    `persistent=True` to call it again. With $y = \sin(x) \cdot x$ at $x = 3$, the
    picture shows what the tape recorded; the player below steps through it.
    """)
    return


@app.cell
def _(np, nt):
    x = nt.Variable(3.0, name="x")
    with nt.GradientTape(persistent=True) as tape:
        y = np.sin(x) * x
    tape.graph(target=y, names={y: "y"})
    return tape, x, y


@app.cell
def _(mo):
    mo.md(r"""
    ## The tape, played

    The player steps through the forward pass op by op, then the reverse pass: press
    Play, or use the buttons. It is an anywidget widget: marimo runs it through
    `mo.ui.anywidget`, and its `frame` is a value other cells can read.
    """)
    return


@app.cell
def _(mo, nt, tape, y):
    player = mo.ui.anywidget(nt.TapePlayer(tape, y, names={y: "y"}, interval=0.4))
    player
    return (player,)


@app.cell
def _(mo, player):
    mo.md(f"The player is at frame **{player.value['frame']}** of {player.value['last']}.")
    return


@app.cell
def _(mo):
    mo.md(r"""
    ## `%%tape` without magics

    Jupyter's `%%tape` magic records a cell and summarises it; marimo has no magics, so
    `nt.tape_cell` does the same job as a `with` block. `grad="loss"` names the target,
    `graph=True` draws the tape; the cell's last line shows the summary.
    """)
    return


@app.cell
def _(np, nt):
    w = nt.Variable(np.array([1.0, -2.0]), name="w")
    with nt.tape_cell(grad="loss", graph=True) as cell:
        prediction = np.sum(w * np.array([3.0, 4.0]))
        loss = (prediction - 1.0) ** 2
    cell
    return


@app.cell
def _(mo):
    mo.md(r"""
    ## Exercise

    Let $f(w) = \sum (w - 1)^2$ for `w = nt.Variable([0.5, 2.0, 5.0])`. Compute
    $df/dw$ with a tape and store it in `answer` (a numpy array). Check it by hand
    afterwards. The cell after it checks your answer and says what is still wrong,
    without giving the answer away.
    """)
    return


@app.cell
def _(nt):
    w_exercise = nt.Variable([0.5, 2.0, 5.0])
    # your code here: record f with a tape, then
    answer = None
    return (answer,)


@app.cell
def _(answer, nt):
    nt.exercises.feedback("03-gradient", answer)
    return


@app.cell
def _(mo):
    mo.accordion({"One solution (open it after you have tried)": mo.md(r"""
    ```python
    with nt.GradientTape() as tape_exercise:
        f = np.sum((w_exercise - 1.0) ** 2)
    answer = tape_exercise.gradient(f, w_exercise).numpy()
    ```
    """)})
    return


if __name__ == "__main__":
    app.run()
