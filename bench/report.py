"""Rows of results, and the table they print as (Markdown, so it pastes into the README)."""

COLUMNS = ("nbtape", "numpy", "autograd", "torch", "jax")


class Row:
    """One line of the results table.

    ``values`` maps a column to a number in ``unit``; ``noise`` maps a column to
    its spread (median/best - 1).  ``ratio`` is nbtape over the row's baseline,
    from the best runs of one interleaved measurement; ``ratio_median`` is the same
    from the medians.  ``ok`` is True/False against the issue's target, or None
    where the row has no target.
    """

    def __init__(self, section, case, unit, values, noise=None, ratio=None,
                 ratio_median=None, target="", ok=None, note=""):
        self.section, self.case, self.unit = section, case, unit
        self.values = {k: v for k, v in values.items() if v is not None}
        self.noise = noise or {}
        self.ratio, self.ratio_median = ratio, ratio_median
        self.target, self.ok, self.note = target, ok, note

    def to_json(self):
        return dict(section=self.section, case=self.case, unit=self.unit, values=self.values,
                    noise=self.noise, ratio=self.ratio, ratio_median=self.ratio_median,
                    target=self.target, ok=self.ok, note=self.note)


def fmt(x):
    if x is None:
        return ""
    if isinstance(x, str):
        return x
    a = abs(x)
    if a >= 100:
        return f"{x:,.0f}"
    if a >= 10:
        return f"{x:.1f}"
    if a >= 1:
        return f"{x:.2f}"
    return f"{x:.3g}"


def table(rows, columns):
    head = ["", "case", "unit", *columns, "nbtape / baseline", "target", "ok"]
    lines = ["| " + " | ".join(head) + " |", "|" + "|".join("---" for _ in head) + "|"]
    for r in rows:
        cells = [r.section, r.case, r.unit]
        for c in columns:
            v = r.values.get(c)
            cell = fmt(v)
            if v is not None and r.noise.get(c, 0) >= 0.10:
                cell += f" (±{r.noise[c]:.0%})"   # a noisy sample: median this far above best
            cells.append(cell)
        ratio = ""
        if r.ratio is not None:
            ratio = f"{r.ratio:.2f}x"
            if r.ratio_median is not None:
                ratio += f" (med {r.ratio_median:.2f}x)"
        cells += [ratio, r.target, {True: "yes", False: "**NO**", None: ""}[r.ok]]
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def notes(rows):
    return [f"- {r.section} {r.case}: {r.note}" for r in rows if r.note]
