"""The one palette of nbtape's pictures and widgets, and the sizes that read in a lecture hall.

Colours come from the Okabe-Ito palette (Okabe and Ito, "Color Universal Design",
2008), which people with the common forms of colour blindness tell apart, and
each has one meaning everywhere: **reverse mode** (gradients, adjoints, the
gradient path) is vermillion, **forward mode** (tangents) is blue, NaN and inf
are reddish purple, the op a picture points at is yellow.  Lines and fills use
the palette's colours and light tints of them; text uses a darker shade of the
same hue where the palette colour itself is too light to read (every text colour
here has a contrast of at least 4.5:1 on white and on every fill below, the
yellow highlight included: ``TEXT_COLOURS`` and ``FILLS`` name them).  Colour is never
the only cue: the pictures also say ``grad = ...``, ``tangent = ...``,
``value has 1 NaN``, and their legends name every colour and fill they use.

Sizes: text is never drawn below ``MIN_TEXT_PX`` CSS pixels at scale 1, so a
picture shown at its own size in a 1280-pixel-wide window reads at the back of a
room; ``scale`` options make everything larger (or smaller) from there.

The tape pictures (``nbtape.notebook.graph``), the inspector and the training
monitor import their colours from here; so can any other picture.

>>> REVERSE, FORWARD
('#D55E00', '#0072B2')
>>> px(12), pt_for_px(16)
(16.0, 12.0)
"""
import math

# Okabe-Ito, in the palette's own order.
BLACK = "#000000"
ORANGE = "#E69F00"
SKY_BLUE = "#56B4E9"
BLUISH_GREEN = "#009E73"
YELLOW = "#F0E442"
BLUE = "#0072B2"
VERMILLION = "#D55E00"
REDDISH_PURPLE = "#CC79A7"
OKABE_ITO = (BLACK, ORANGE, SKY_BLUE, BLUISH_GREEN, YELLOW, BLUE, VERMILLION,
             REDDISH_PURPLE)

# Meanings.  Forward is blue and reverse vermillion in every picture and chart.
REVERSE = VERMILLION            # gradients, adjoints, the gradient path
REVERSE_TEXT = "#A63F00"        # vermillion, dark enough for text (6.3:1 on white)
FORWARD = BLUE                  # tangents, forward mode (lines and fills)
# blue, dark enough for text on every fill here, the yellow highlight too (5.2:1 there;
# the palette's blue itself has only 3.9:1 on yellow)
FORWARD_TEXT = "#005F96"
NONFINITE = REDDISH_PURPLE      # NaN and inf: borders
NONFINITE_TEXT = "#9E3D76"      # reddish purple for text (6.2:1)
HIGHLIGHT = YELLOW              # the op a picture points at (fill)
INK = "#1F2937"                 # text (14.7:1)
MUTED_TEXT = "#555555"          # secondary text and "not on the path" (7.5:1), never lighter
OFF_PATH = "#A3A3A3"            # lines off the gradient path (text there is MUTED_TEXT)
OUTLINE = "#374151"             # box outlines
# Verdicts in text (explain, coverage), dark shades of bluish green, orange and reddish
# purple: told apart by colour-blind readers, and always next to words that say it.
GOOD_TEXT = "#00704F"           # 6.1:1
WARN_TEXT = "#8F5A00"           # 5.8:1
BAD_TEXT = NONFINITE_TEXT

# Light tints (fills), each named in a picture's legend when used.
TINT = {
    "sky blue": "#D4EBF9",
    "bluish green": "#C8ECDF",
    "orange": "#FBE7BD",
    "yellow": HIGHLIGHT,
    "grey": "#E8E8E8",
    "light grey": "#F5F5F5",
    "reddish purple": "#F3DCEA",
    "cream": "#FFF8D9",
    "white": "#FFFFFF",
}

# Every colour text is drawn in, and every fill text is drawn on (a picture's boxes, the
# highlight, the player's current step): each pair reads at 4.5:1 or more (WCAG AA).
TEXT_COLOURS = (INK, MUTED_TEXT, REVERSE_TEXT, FORWARD_TEXT, NONFINITE_TEXT)
STEP_BACKGROUND = "#FDE68A"     # the player's current step in its list of frames
FILLS = (*TINT.values(), STEP_BACKGROUND)

# Series colours for charts with several lines (matplotlib's prop_cycle, the monitor):
# the palette without black and yellow (too light for a thin line), reverse first.
SERIES = (BLUE, VERMILLION, BLUISH_GREEN, REDDISH_PURPLE, ORANGE, SKY_BLUE)
# Line styles to pair with SERIES, so lines differ in more than colour.
DASHES = ("solid", "dashed", "dashdot", "dotted", (0, (5, 1)), (0, (3, 1, 1, 1, 1, 1)))

MIN_TEXT_PX = 14.0              # the smallest text a picture or widget draws at scale 1
CSS_PX_PER_PT = 4.0 / 3.0       # Graphviz sizes text in points; browsers show 96 px/inch


def px(points):
    """CSS pixels of a ``points``-sized font (how a browser shows a Graphviz SVG)."""
    return round(points * CSS_PX_PER_PT, 4)


def pt_for_px(pixels):
    """The point size that shows as ``pixels`` CSS pixels."""
    return round(pixels / CSS_PX_PER_PT, 4)


def contrast(colour, background="#FFFFFF"):
    """WCAG contrast ratio of two ``#rrggbb`` colours (1 to 21; text wants 4.5 or more).

    >>> round(contrast("#000000"), 1), round(contrast(MUTED_TEXT), 1)
    (21.0, 7.5)
    """
    def luminance(hex_colour):
        rgb = [int(hex_colour.lstrip("#")[k:k + 2], 16) / 255 for k in (0, 2, 4)]
        lin = [c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4 for c in rgb]
        return 0.2126 * lin[0] + 0.7152 * lin[1] + 0.0722 * lin[2]
    hi, lo = sorted((luminance(colour), luminance(background)), reverse=True)
    return (hi + 0.05) / (lo + 0.05)


def check_scale(scale, what="scale"):
    """``scale`` as a float, or a ValueError naming ``what``: a number from 0.5 to 4.

    >>> check_scale(1.5), check_scale(2)
    (1.5, 2.0)
    >>> check_scale("big")
    Traceback (most recent call last):
        ...
    ValueError: scale must be a number from 0.5 to 4 (1 is the default size, 1.5 half as large again), not 'big'.
    """
    ok = isinstance(scale, (int, float)) and not isinstance(scale, bool)
    if not ok or not math.isfinite(scale) or not 0.5 <= scale <= 4:
        raise ValueError(f"{what} must be a number from 0.5 to 4 (1 is the default size, "
                         f"1.5 half as large again), not {scale!r}.")
    return float(scale)


def text_px(base_px, scale=1.0):
    """A CSS font size for widgets: ``base_px`` times ``scale``, rounded to 0.1 px.

    >>> text_px(15, 1.5), text_px(14)
    ('22.5px', '14px')
    """
    return f"{round(base_px * scale, 1):g}px"
