"""The tutorials name what they quote, and state the facts a teacher is asked about correctly.

Two examples come from blog posts: the wrong-sign toy (w = [0.25, 0.15], y = 0.75) of
*Gradient Tape with Tensorflow* (its section "Coding from scratch"), and the fit with
|y - y_hat| of Gowri Shankar's *Automatic Differentiation Using Gradient Tapes* (14 December
2020).  Every notebook that quotes them names them, neutrally (no "well-known guide");
notebook 12 credits the digits as ``nbtape/training/data/README.md`` does.  Then a few
sentences of mathematics (each test names the notebook), and sentences short enough to
read aloud: one idea each, not chains of colons.
"""
import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = ROOT / "notebooks"
TUTORIALS = sorted(NOTEBOOKS.glob("[0-9]*.ipynb"))

TOY_POST = "*Gradient Tape with Tensorflow*"
TOY_SECTION = '"Coding from scratch"'
FIT_POST = "*Automatic Differentiation Using Gradient Tapes*"
FIT_AUTHOR = "Gowri Shankar"
FIT_DATE = "14 December 2020"


def _markdown_cells(name):
    cells = json.loads((NOTEBOOKS / name).read_text(encoding="utf-8"))["cells"]
    return [" ".join("".join(c["source"]).split()) for c in cells if c["cell_type"] == "markdown"]


def _markdown(name):
    return "\n".join(_markdown_cells(name))


def _cell(name, words):
    """The one markdown cell of ``name`` holding ``words`` (whitespace as in a paragraph)."""
    found = [c for c in _markdown_cells(name) if words in c]
    assert len(found) == 1, f"{name}: {len(found)} markdown cells hold {words!r}"
    return found[0]


def test_the_wrong_sign_toy_names_its_blog_post():
    text = _markdown("11_fitting_a_line.ipynb")
    assert TOY_POST in text and TOY_SECTION in text


def test_only_notebook_11_uses_the_wrong_sign_toy():
    # the magic (3c) comes long before 11: it has a toy of its own, and no forward reference
    users = [p.name for p in TUTORIALS if any(
        "[[0.25], [0.15]]" in "".join(c["source"])
        for c in json.loads(p.read_text(encoding="utf-8"))["cells"])]
    assert users == ["11_fitting_a_line.ipynb"]


def test_notebook_11_quotes_the_posts_printout_of_the_toy():
    assert "`[[0.39999998], [0.79999995]]`" in _markdown("11_fitting_a_line.ipynb")


@pytest.mark.parametrize("name", ["11_fitting_a_line.ipynb",
                                  "11b_appendix_the_guides_printout.ipynb"])
def test_the_absolute_error_fit_names_its_blog_post(name):
    text = _markdown(name)
    assert FIT_POST in text and FIT_AUTHOR in text and FIT_DATE in text, name


def test_the_contents_name_the_post_of_the_appendix():
    cells = json.loads((NOTEBOOKS / "contents.ipynb").read_text(encoding="utf-8"))["cells"]
    lines = "".join("".join(c["source"]) for c in cells).splitlines()
    [entry] = [line for line in lines if "(11b_appendix_the_guides_printout.ipynb)" in line]
    assert FIT_POST in entry and FIT_AUTHOR in entry


@pytest.mark.parametrize("path", TUTORIALS + [NOTEBOOKS / "contents.ipynb"],
                         ids=lambda p: p.stem)
def test_a_source_is_named_not_described(path):
    text = _markdown(path.name).lower()
    for vague in ("well-known guide", "widely read guide", "published guide", "the guide's signs"):
        assert vague not in text, f"{path.name} says {vague!r}: name the source instead"


@pytest.mark.parametrize("page", ["docs/teaching.md", "README.md"])
def test_the_pages_name_the_source_too(page):
    text = " ".join((ROOT / page).read_text(encoding="utf-8").split())
    for vague in ("published guide", "the guide's printout", "the guide's float32"):
        assert vague not in text.lower(), f"{page} says {vague!r}: name the source instead"
    assert FIT_AUTHOR in text, page


def test_the_appendix_title_names_the_post():
    title = next(c for c in _markdown_cells("11b_appendix_the_guides_printout.ipynb")
                 if c.startswith("# 11b."))
    assert FIT_AUTHOR in title.split("**Goal:**")[0] and "guide" not in title.lower()


def test_notebook_12_credits_the_digits_as_the_data_readme_does():
    readme = " ".join((ROOT / "nbtape" / "training" / "data" / "README.md").read_text(
        encoding="utf-8").split())
    text = _markdown("12_training_a_network.ipynb")
    for credit in ("E. Alpaydin", "C. Kaynak", "*Optical Recognition of Handwritten Digits*",
                   "UCI Machine Learning Repository", "CC BY 4.0",
                   "https://doi.org/10.24432/C50P49"):
        assert credit in readme, f"the data README no longer says {credit!r}"
        assert credit in text, f"notebook 12 does not credit the digits with {credit!r}"


def test_01_the_central_difference_error_is_the_third_derivatives():
    cell = _cell("01_what_is_autodiff.ipynb", "**truncation error**")
    assert "h^2 f'''(x)/6" in cell and "third derivative" in cell
    assert "exact for a quadratic" in cell
    assert "curvature" not in cell          # the second derivative cancels


def test_04_the_loss_is_quadratic_only_for_a_model_linear_in_its_weights():
    cell = _cell("04_control_flow_and_higher_order.ipynb", "### A Newton step")
    assert "only when the model is linear in them" in cell
    assert "For a small model with a squared-error loss" not in cell


def test_04b_the_subgradient_guarantee_is_for_convex_losses_only():
    cell = _cell("04b_kinks.ipynb", "*subgradient method*")
    assert "A ReLU network's loss is not convex" in cell
    assert "one reason gradient descent copes with ReLU networks" not in cell


def test_06b_sends_forward_mode_to_7b():
    cell = _cell("06b_your_own_derivative.ipynb", "in forward mode")
    assert "[notebook 7b](07b_forward_mode.ipynb)" in cell and "notebook 7)" not in cell
    assert (NOTEBOOKS / "07b_forward_mode.ipynb").is_file()


def test_06b_defines_a_vjp_where_it_first_uses_one():
    first = next(c for c in _markdown_cells("06b_your_own_derivative.ipynb")
                 if re.search(r"\bVJP\b", c))
    assert "vector-Jacobian product" in first and "$g^T J$" in first
    assert "(08_vjp_jvp_and_hvp.ipynb)" in first and (NOTEBOOKS / "08_vjp_jvp_and_hvp.ipynb").is_file()


def _sentences(markdown):
    """The sentences of a markdown cell's prose, code and math each one word, headings left out."""
    text = re.sub(r"<!--.*?-->", "", markdown, flags=re.S)       # a quote marker is no prose
    text = re.sub(r"`[^`]*`", "CODE", text)
    text = re.sub(r"\$[^$]*\$", "MATH", text)
    text = text.replace("**Goal:**", "GOAL")                      # the label is no colon
    sentences = []
    for paragraph in re.split(r"\n\s*\n", text):
        if not paragraph.lstrip().startswith("#"):
            sentences += re.split(r"(?<=[.!?])\s+", " ".join(paragraph.split()))
    return [s for s in sentences if s]


@pytest.mark.parametrize("name, words", [
    ("06b_your_own_derivative.ipynb", "**Goal:**"),
    ("03d_more_of_the_tape_magic.ipynb", "140 ops"),
    ("15_tracing_a_step.ipynb", "**Goal:**"),
    # the cells the fourth wave rewrote (the path, 05b's fixes, the picture of a tape)
    ("03_gradient_tape_basics.ipynb", "undo history"),
    ("03_gradient_tape_basics.ipynb", "(03c_the_tape_magic.ipynb)"),
    ("03c_the_tape_magic.ipynb", "**Goal:**"),
    ("03c_the_tape_magic.ipynb", "one-point fit"),
    ("03d_more_of_the_tape_magic.ipynb", "**Goal:**"),
    ("03d_more_of_the_tape_magic.ipynb", "--inspect`: watch"),
    ("05b_why_is_my_gradient_nan.ipynb", "does not fix the NaN"),
    ("05b_why_is_my_gradient_nan.ipynb", "There is a second fix"),
    ("05b_why_is_my_gradient_nan.ipynb", "A common fix is an epsilon"),
    ("06_custom_gradients.ipynb", "Notebook 5b met"),
    ("07_forward_and_reverse_mode.ipynb", "undo history"),
])
def test_one_idea_per_sentence(name, words):
    cells = json.loads((NOTEBOOKS / name).read_text(encoding="utf-8"))["cells"]
    [cell] = ["".join(c["source"]) for c in cells
              if c["cell_type"] == "markdown" and words in "".join(c["source"])]
    for sentence in _sentences(cell):
        length = len(sentence.split())
        # a goal lists what the notebook teaches, so it may run a little longer
        assert length <= (40 if sentence.startswith("GOAL") else 30), (name, sentence)
        if ":" in sentence:
            assert length <= 20, f"{name}: a long sentence chained with a colon: {sentence}"


def test_the_sentence_splitter_sees_a_chain_of_colons():
    long_chain = ("The replay is a plain Python function that calls numpy on plain arrays, one line "
                  "per call: no tape, no dispatch, and the same numbers as eager, bit for bit.")
    assert _sentences("# A title\n\nShort one. " + long_chain) == ["Short one.", long_chain]
    assert _sentences("**Goal:** learn `a: b`\nand $x$. <!-- quote: 1 -->Done.") == [
        "GOAL learn CODE and MATH.", "Done."]


def test_05b_fixes_the_overflow_without_a_custom_gradient_and_points_to_06():
    cells = json.loads((NOTEBOOKS / "05b_why_is_my_gradient_nan.ipynb").read_text(
        encoding="utf-8"))["cells"]
    code = "\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "code")
    assert "custom_gradient" not in code and "np.logaddexp(0, x)" in code
    assert "(06_custom_gradients.ipynb)" in _cell("05b_why_is_my_gradient_nan.ipynb",
                                                  "There is a second fix")
    # 06 is the one home of the custom-gradient fix, and it says where the NaN was met
    assert "Notebook 5b met this NaN" in _markdown("06_custom_gradients.ipynb")


def test_05b_says_what_an_epsilon_costs_and_prefers_the_double_where():
    cell = _cell("05b_why_is_my_gradient_nan.ipynb", "A common fix is an epsilon")
    assert "`np.sqrt(x + 1e-12)`" in cell and "5 \\times 10^5" in cell
    assert "Prefer the double `where`" in cell
    table = _cell("05b_why_is_my_gradient_nan.ipynb", "| The warning says |")
    assert "Not an epsilon: `np.sqrt(x + 1e-12)` has gradient 5e5 at 0" in table


def test_13s_solution_says_tanhs_ratio_is_practically_1():
    solution = _cell("13_vanishing_gradients.ipynb", "One solution")
    assert "practically 1" in solution and "interesting result" in solution


def test_15_says_what_it_needs_from_12():
    top = _cell("15_tracing_a_step.ipynb", "**Goal:**")
    assert "**Before you start:**" in top and "(12_training_a_network.ipynb)" in top
    for needed in ("Adam", "cross-entropy loss", "optional"):
        assert needed in top, needed


def test_no_vhs_tape():
    texts = {p.name: _markdown(p.name) for p in TUTORIALS}
    marimo = NOTEBOOKS / "marimo" / "03_gradient_tape_basics.py"
    texts[marimo.name] = marimo.read_text(encoding="utf-8")
    for name, text in texts.items():
        assert "VHS" not in text, f"{name}: few students have seen a VHS tape"
