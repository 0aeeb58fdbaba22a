"""The tape player as an animation for slides: an animated GIF (or PNG), one frame per step.

Each frame is the player's picture drawn as PNG by the layout program, with
the frame's caption written under it; the frames are padded to one size on a
white background and joined by Pillow (an optional dependency: ``pip install
Pillow``; matplotlib already brings it).  Where no PNG can be drawn (JupyterLite,
or a system ``dot`` without cairo) the message says to save ``.svg`` (an animated
SVG, made from the SVG frames with nothing more than Python) or ``.html``.
"""
import html
import io
import re
import textwrap

from ..render import RenderError, draws_png, layout

ANIMATION_FORMATS = {".gif": "GIF", ".png": "PNG"}
CAPTION_PX = 18           # caption text height on the slide
SLIDE_CAPTION_CHARS = 110  # wrap width of the caption, in characters


def _pillow():
    try:
        from PIL import Image, ImageDraw, ImageFont
    except ImportError:
        raise RenderError("Saving the player as an animation needs Pillow: run "
                          "`pip install Pillow` (or save it as .html, which needs nothing "
                          "more).") from None
    return Image, ImageDraw, ImageFont


# fonts with the captions' symbols (× ∂ …); Pillow's own font lacks them
FONTS = ("DejaVuSans.ttf", "Arial Unicode.ttf", "arial.ttf", "Arial.ttf", "segoeui.ttf")
PLAIN = str.maketrans({"×": "x", "∂": "d", "…": "...", "—": "-", "−": "-"})


def _font(ImageFont, size):
    """``(font, has the symbols)``: a system font that has them, else Pillow's own."""
    for name in FONTS:
        try:
            return ImageFont.truetype(name, size), True
        except (OSError, ImportError):
            continue
    try:
        return ImageFont.load_default(size=size), False     # Pillow >= 10.1 with FreeType
    except (TypeError, OSError, ImportError):
        return ImageFont.load_default(), False


def frame_image(png, caption, width=None):
    """One slide: the PNG picture with ``caption`` under it, RGB on white.

    >>> from nbtape.notebook.render import layout
    >>> im = frame_image(layout("digraph { a }", "png"), "Forward 1/1: a")
    >>> im.mode, im.size[1] > 40
    ('RGB', True)
    """
    Image, ImageDraw, ImageFont = _pillow()
    picture = Image.open(io.BytesIO(png)).convert("RGBA")
    font, symbols = _font(ImageFont, CAPTION_PX)
    lines = textwrap.wrap(caption if symbols else caption.translate(PLAIN),
                          SLIDE_CAPTION_CHARS) or [""]
    line_h = int(CAPTION_PX * 1.4)
    width = max(width or 0, picture.width, 400)
    text_w = max(ImageDraw.Draw(Image.new("RGB", (1, 1))).textlength(s, font=font)
                 for s in lines)
    width = max(width, int(text_w) + 24)
    out = Image.new("RGB", (width, picture.height + line_h * len(lines) + 16), "white")
    out.paste(picture, (0, 0), picture)
    draw = ImageDraw.Draw(out)
    for i, line in enumerate(lines):
        draw.text((12, picture.height + 8 + i * line_h), line, fill="#111827", font=font)
    return out


def save_animation(path, graphs, captions, interval, suffix):
    """Write the frames (DOT ``graphs`` and ``captions``) to ``path`` as GIF or APNG.

    ``interval`` is seconds per frame; the last frame stays three times as long.
    """
    Image, _, _ = _pillow()
    if not draws_png():
        raise RenderError("nbtape cannot draw PNG here (no layout program that writes PNG, "
                          "as in JupyterLite), so it cannot make a GIF: save the player as "
                          ".svg (an animated SVG) or .html (SVG frames and buttons) instead.")
    slides = [frame_image(layout(g.source, "png"), c) for g, c in zip(graphs, captions)]
    width = max(s.width for s in slides)
    height = max(s.height for s in slides)
    frames = []
    for s in slides:
        canvas = Image.new("RGB", (width, height), "white")
        canvas.paste(s, (0, 0))
        frames.append(canvas)
    if suffix == ".gif":
        # a fast 64-colour palette per frame: Pillow's default (median cut) takes three
        # times as long on a wide tape, for the same look (the pictures have few colours)
        fast = getattr(getattr(Image, "Quantize", Image), "FASTOCTREE")
        frames = [f.quantize(colors=64, method=fast) for f in frames]
    ms = int(round(interval * 1000))
    durations = [ms] * (len(frames) - 1) + [3 * ms]
    frames[0].save(path, format=ANIMATION_FORMATS[suffix], save_all=True,
                   append_images=frames[1:], duration=durations, loop=0)
    return len(frames)


# a frame's opening tag: other attributes (the fitting style) may come before its size
_SIZE = re.compile(r'<svg((?: [\w:-]+="[^"]*")*?) width="([\d.]+)pt" height="([\d.]+)pt"')


def animated_svg(svgs, captions, interval):
    """One SVG showing each frame (``svgs``, each with its caption) in turn, looping.

    Plain SVG animation (SMIL ``<animate>``, which browsers and slide programs
    that show SVG play), so it needs neither Pillow nor a PNG renderer; each
    frame is kept whole.  ``interval`` is seconds per frame.

    >>> s = animated_svg(['<svg width="10pt" height="5pt"><g/></svg>'] * 2, ["a", "b"], 1)
    >>> s.count('class="frame"'), 'dur="2s"' in s
    (2, True)
    """
    n = len(svgs)
    sizes = [tuple(float(v) for v in _SIZE.match(s).groups()[1:]) if _SIZE.match(s)
             else (0, 0) for s in svgs]
    width = max([w for w, _ in sizes] + [400.0])
    height = max(h for _, h in sizes)
    # 13-unit Helvetica averages under 6.5 units a character
    wrapped = [textwrap.wrap(c, max(40, int((width - 16) / 6.5))) or [""] for c in captions]
    line_h = 16
    total_h = height + 12 + line_h * max(len(w) for w in wrapped)
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width:g}pt" '
             f'height="{total_h:g}pt" viewBox="0 0 {width:g} {total_h:g}">'
             f'<rect width="100%" height="100%" fill="white"/>']
    dur = f"{interval * n:g}s"
    for k, (svg, lines) in enumerate(zip(svgs, wrapped)):
        if k == 0:
            values, times = "visible;hidden", f"0;{1 / n:.6g}"
        else:
            values, times = "hidden;visible;hidden", f"0;{k / n:.6g};{(k + 1) / n:.6g}"
        if k == n - 1 and k > 0:
            values, times = "hidden;visible", f"0;{k / n:.6g}"
        text = "".join(f'<text x="8" y="{height + 12 + line_h * (i + 1) - 4:g}" '
                       f'font-family="Helvetica,sans-serif" font-size="13" fill="#111827">'
                       f"{html.escape(line)}</text>" for i, line in enumerate(lines))
        # inside the outer picture, whose units are points, a size in "pt" would
        # count twice: the frame's size is given in plain units
        inner = _SIZE.sub(lambda m: f'<svg{m[1]} width="{m[2]}" height="{m[3]}"', svg, count=1)
        parts.append(f'<g class="frame" visibility="{"visible" if k == 0 else "hidden"}">'
                     f'<animate attributeName="visibility" values="{values}" '
                     f'keyTimes="{times}" calcMode="discrete" dur="{dur}" '
                     f'repeatCount="indefinite"/>{inner}{text}</g>')
    parts.append("</svg>\n")
    return "".join(parts)
