"""The report a %%tape cell shows (nbtape.notebook.cell_report)."""
import numpy as np

import nbtape as nt
from nbtape.notebook import cell_report as S


def recorded(fn, *values, persistent=True):
    with nt.GradientTape(persistent=persistent) as tape:
        tape.watch(list(values))
        out = fn(*values)
    return tape, out


def test_tape_nbytes_counts_each_array_once():
    x = nt.constant(np.zeros(10_000))
    tape, _ = recorded(lambda x: x * x + x * x, x)
    # the multiplies keep x (shared, counted once); outputs this big are not kept for
    # pictures, and the sum keeps nothing
    arrays = 80_000
    assert arrays <= S.tape_nbytes(tape) <= arrays + 3 * S.OP_OVERHEAD + 8 * S.ARRAY_OVERHEAD


def test_tape_nbytes_of_a_used_tape_drops_saved_values():
    x = nt.constant(np.zeros(10_000))
    tape, y = recorded(lambda x: np.sin(x), x, persistent=False)
    before = S.tape_nbytes(tape)
    tape.gradient(y, x)
    assert S.tape_nbytes(tape) < before


def test_tape_nbytes_grows_with_a_loop():
    w = nt.Variable(1.0)
    with nt.GradientTape() as tape:
        for _ in range(100):
            loss = w * w
    assert S.tape_nbytes(tape) >= 100 * S.OP_OVERHEAD


def test_format_bytes_and_large_note():
    assert S.format_bytes(0) == "0 bytes"
    assert S.format_bytes(2048) == "2.0 kB"
    note = S.large_tape_note(12345, 3 * 2**20)
    assert "12,345 ops" in note and "3.0 MB" in note and "per step" in note


def test_inline_value():
    assert S.inline_value(np.float64(2.5)) == "2.5"
    assert S.inline_value(np.arange(6.0)) == "[0.0 1.0 2.0 3.0 4.0 5.0]"
    assert S.inline_value(np.arange(7.0)) is None


def test_gradient_rows_notes_for_none():
    x = nt.constant(3.0)
    k = nt.Variable([1, 2], name="k")
    u = nt.constant(1.0)
    with nt.GradientTape() as tape:
        tape.watch([x, u])
        z = x * x
        q = k * k
    rows = S.gradient_rows(tape, z, [("x", x), ("u", u), ("k", k)])
    assert [r.label for r in rows] == ["x", "u", "k"]
    assert float(rows[0].gradient) == 6.0 and rows[0].note is None
    assert rows[1].gradient is None and rows[1].note == "no recorded path to it"
    assert rows[2].gradient is None and "dtype is int64" in rows[2].note


def test_report_text_and_html():
    x = nt.constant(np.ones((2, 2)))
    tape, z = recorded(lambda x: np.sum(x) ** 2, x)
    big = nt.constant(np.arange(10.0))
    rows = S.gradient_rows(tape, z, [("x", x)])
    report = S.CellReport("t", tape, [("x", x)], [("z", z), ("big", big)],
                          status="Recording stopped by X", notes=["a <note>"],
                          target="z", rows=rows)
    assert str(report).splitlines() == [
        "t: 2 ops recorded (persistent)",
        "  Recording stopped by X",
        "  watched: x (shape=(2, 2), float64)",
        "  results: z = 16.0, big (shape=(10,))",
        "  gradients of z:",
        "    dz/dx = ",
        "      [[8.0 8.0]",
        "       [8.0 8.0]]",
        "  note: a <note>",
    ]
    html = report._repr_html_()
    assert "%%tape \u2192 t" in html and "a &lt;note&gt;" in html and "<note>" not in html
    assert "dz/dx" in html and "[[8.0 8.0]\n [8.0 8.0]]" in html
    assert ">\u2026<" in html                      # the big result is not inlined


def test_report_with_nothing_watched():
    tape = nt.GradientTape()
    report = S.CellReport("tape", tape, [], [], target="z", rows=[])
    assert str(report) == ("tape: 0 ops recorded (non-persistent)\n  watched: nothing\n"
                           "  gradients of z: nothing is watched")
    assert "nothing is watched" in report._repr_html_()


def test_long_lists_are_cut_with_a_count():
    vs = [nt.Variable(float(i), name=f"v{i}") for i in range(S.REPORT_LISTED + 3)]
    with nt.GradientTape() as tape:
        total = sum(v * v for v in vs)
    watched = [(v.name, v) for v in vs]
    report = S.CellReport("tape", tape, watched, watched, target="total",
                          rows=S.gradient_rows(tape, total, watched))
    text = str(report)
    assert "v11 (shape=(), float64) and 3 more" in text and "v12 (" not in text
    assert text.count("dtotal/dv") == S.REPORT_LISTED and "    ... and 3 more" in text
    assert report._repr_html_().count("\u2026 and 3 more") == 3
