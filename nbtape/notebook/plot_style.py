"""The tutorials' one plot style: matplotlib figures that read on a projector.

Every tutorial that plots calls ``nt.plot_style.use()`` once, right after importing
pyplot, and shows each figure with ``nt.plot_style.show(fig, alt)``, so all its
figures share one look and each has alt text:

* stored at ``DPI`` dots per inch and at least ``MIN_WIDTH_PX`` wide (the tutorials'
  figures are 9 to 10 inches wide: 900 to 1000 px, what a notebook's output area
  shows at its own size on a 1280-pixel projector);
* no text under ``palette.MIN_TEXT_PX`` (14 px) at that size: the smallest text (tick
  labels, legends) is ``SMALLEST_PT`` points, 16.7 px at 100 dpi, and stays above 14
  px even where a front end shrinks a figure of up to ``FIT_PX`` to fit;
* lines in the colour-blind-safe Okabe-Ito colours of ``nbtape.display.palette``
  (``SERIES``: blue first, then vermillion, ...) and 2 px wide, so a figure's
  colours mean what they mean in nbtape's own pictures.

Only matplotlib's settings change (``matplotlib.rcParams``, the same switch as
``plt.style.use``); nothing is imported until ``use`` or ``rc`` is called.

>>> RC["figure.dpi"], SMALLEST_PT, round(smallest_text_px(), 1)
(100, 12, 16.7)
"""
from ..display import palette as P

DPI = 100
MIN_WIDTH_PX = 800          # narrowest stored figure
FIT_PX = 1000               # widest a figure shows at its own size (palette's 1280 px screen)
SMALLEST_PT = 12            # tick labels and legends; everything else is larger

RC = {
    "figure.dpi": DPI,
    "savefig.dpi": "figure",
    "figure.figsize": (9.0, 5.0),
    "figure.facecolor": "white",
    "font.size": 13,
    "axes.titlesize": 15,
    "axes.labelsize": 14,
    "xtick.labelsize": SMALLEST_PT,
    "ytick.labelsize": SMALLEST_PT,
    "legend.fontsize": SMALLEST_PT,
    "legend.title_fontsize": 13,
    "figure.titlesize": 16,
    "axes.titlecolor": P.INK,
    "axes.labelcolor": P.INK,
    "text.color": P.INK,
    "xtick.color": P.INK,
    "ytick.color": P.INK,
    "axes.edgecolor": P.OUTLINE,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "lines.linewidth": 2.0,
    "lines.markersize": 7.0,
    "grid.alpha": 0.3,
}
# every setting above that sizes text, for the check that none is under SMALLEST_PT
TEXT_SIZES = ("font.size", "axes.titlesize", "axes.labelsize", "xtick.labelsize",
              "ytick.labelsize", "legend.fontsize", "legend.title_fontsize",
              "figure.titlesize")


def rc():
    """The style's matplotlib settings (``RC`` and the palette's colour cycle), for
    ``matplotlib.rc_context`` or ``rcParams.update``.

    >>> import matplotlib
    >>> with matplotlib.rc_context(rc()):
    ...     matplotlib.rcParams["axes.prop_cycle"].by_key()["color"][:2]
    ['#0072B2', '#D55E00']
    """
    from cycler import cycler
    return dict(RC, **{"axes.prop_cycle": cycler(color=list(P.SERIES))})


def use():
    """Draw every following matplotlib figure in this style (call it after
    ``import matplotlib.pyplot``, which sets up Jupyter's own figure settings).

    >>> import matplotlib
    >>> with matplotlib.rc_context():          # (here: undone at the end of the block)
    ...     use()
    ...     matplotlib.rcParams["legend.fontsize"]
    12.0
    """
    import matplotlib
    matplotlib.rcParams.update(rc())


def smallest_text_px(width_px=None):
    """The smallest text of a figure in this style, in px, as a browser shows a figure
    ``width_px`` wide (shrunk to ``FIT_PX`` when wider).

    >>> round(smallest_text_px(1200), 1)
    13.9
    """
    px = SMALLEST_PT * DPI / 72
    return px * min(1.0, FIT_PX / width_px) if width_px else px


def show(fig, alt):
    """Show ``fig`` under the cell with ``alt``, a sentence saying what it shows, as its
    alternative text, then close it (``plt.show()`` would draw it once more).

    The text goes where Jupyter's tools look for it: the output's ``image/png``
    metadata, which nbconvert's HTML and Jupyter Book write as the image's ``alt``.

    >>> show(None, "")
    Traceback (most recent call last):
        ...
    ValueError: show(fig, alt) needs alt, a sentence saying what the figure shows (for readers who cannot see it), not ''.
    """
    if not isinstance(alt, str) or not alt.strip():
        raise ValueError("show(fig, alt) needs alt, a sentence saying what the figure shows "
                         f"(for readers who cannot see it), not {alt!r}.")
    import base64
    import io

    import matplotlib.pyplot as plt
    from IPython.display import display
    # drawn here as Jupyter's inline backend draws a figure (tight box, the figure's dpi
    # and colours), so it shows the same wherever the kernel's own figure display is not
    # set up (a JupyterLite kernel, a console)
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", bbox_inches="tight", facecolor=fig.get_facecolor(),
                edgecolor=fig.get_edgecolor())
    png = base64.b64encode(buffer.getvalue()).decode("ascii")
    display({"image/png": png, "text/plain": repr(fig)}, raw=True,
            metadata={"image/png": {"alt": alt}})
    plt.close(fig)
