"""nbtape/display/palette.py: one colour-blind-safe palette, text colours that read on white."""
import pytest

from nbtape.display import palette as P


contrast_on_white = P.contrast


def test_contrast_is_wcags_ratio():
    assert P.contrast("#FFFFFF") == 1.0
    assert round(P.contrast("#777777"), 2) == 4.48        # the usual "just fails AA" grey
    assert P.contrast("#FFFFFF", "#000000") == P.contrast("#000000")


def test_the_palette_is_okabe_ito_and_each_meaning_is_one_of_its_colours():
    assert P.OKABE_ITO == ("#000000", "#E69F00", "#56B4E9", "#009E73", "#F0E442", "#0072B2",
                           "#D55E00", "#CC79A7")
    for colour in (P.REVERSE, P.FORWARD, P.NONFINITE, P.HIGHLIGHT):
        assert colour in P.OKABE_ITO
    assert len({P.REVERSE, P.FORWARD, P.NONFINITE, P.HIGHLIGHT}) == 4
    assert set(P.SERIES) <= set(P.OKABE_ITO) and len(set(P.SERIES)) == len(P.SERIES)
    assert len(P.DASHES) == len(P.SERIES)


@pytest.mark.parametrize("name", ["REVERSE_TEXT", "FORWARD_TEXT", "NONFINITE_TEXT", "INK",
                                  "MUTED_TEXT"])
def test_text_colours_read_on_white(name):
    # WCAG AA for normal text: 4.5:1; light grey text is what a projector washes out
    assert contrast_on_white(getattr(P, name)) >= 4.5


def test_sizes_and_scale():
    assert P.px(10.5) == P.MIN_TEXT_PX == 14.0
    assert P.pt_for_px(P.px(11)) == 11
    assert P.check_scale(1) == 1.0 and P.check_scale(2.5) == 2.5
    for bad in (0, 0.1, 5, float("nan"), True, "1", None):
        with pytest.raises(ValueError, match="scale must be a number from 0.5 to 4"):
            P.check_scale(bad)
    assert P.text_px(16, 1.25) == "20px"


@pytest.mark.parametrize("name", ["GOOD_TEXT", "WARN_TEXT", "BAD_TEXT"])
def test_verdict_colours_read_on_white_and_are_used(name):
    assert contrast_on_white(getattr(P, name)) >= 4.5


def test_explain_and_coverage_use_the_palette():
    import nbtape as nt
    x = nt.Variable(1.0, name="x")
    with nt.GradientTape() as tape:
        y = x * 2.0
    assert P.GOOD_TEXT in tape.explain(y, x)._repr_html_()
    assert P.GOOD_TEXT in nt.coverage()._repr_html_()
