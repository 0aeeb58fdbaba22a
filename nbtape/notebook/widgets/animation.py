"""The tape player as an animation for slides: an animated GIF (or PNG), one frame per step.

Each frame is the player's picture drawn as PNG by the layout program, with
the frame's caption written under it; the frames are padded to one size on a
white background and joined by Pillow (an optional dependency: ``pip install
Pillow``; matplotlib already brings it).  Where no PNG can be drawn (JupyterLite,
or a system ``dot`` without cairo) the message says to save ``.html`` instead.
"""
import io
import textwrap

from ..render import RenderError, draws_png, layout

ANIMATION_FORMATS = {".gif": "GIF", ".png": "PNG"}
CAPTION_PX = 18           # caption text height on the slide
CAPTION_CHARS = 110       # wrap width of the caption, in characters


def _pillow():
    try:
        from PIL import Image, ImageDraw, ImageFont
    except ImportError:
        raise RenderError("Saving the player as an animation needs Pillow: run "
                          "`pip install Pillow` (or save it as .html, which needs nothing "
                          "more).") from None
    return Image, ImageDraw, ImageFont


def _font(ImageFont, size):
    try:
        return ImageFont.load_default(size=size)    # Pillow >= 10.1 with FreeType
    except (TypeError, OSError, ImportError):
        return ImageFont.load_default()


def frame_image(png, caption, width=None):
    """One slide: the PNG picture with ``caption`` under it, RGB on white.

    >>> from nbtape.notebook.render import layout
    >>> im = frame_image(layout("digraph { a }", "png"), "Forward 1/1: a")
    >>> im.mode, im.size[1] > 40
    ('RGB', True)
    """
    Image, ImageDraw, ImageFont = _pillow()
    picture = Image.open(io.BytesIO(png)).convert("RGBA")
    font = _font(ImageFont, CAPTION_PX)
    lines = textwrap.wrap(caption, CAPTION_CHARS) or [""]
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
                          "as in JupyterLite), so it cannot make an animation: save the "
                          "player as .html instead (SVG frames, no kernel needed).")
    slides = [frame_image(layout(g.source, "png"), c) for g, c in zip(graphs, captions)]
    width = max(s.width for s in slides)
    height = max(s.height for s in slides)
    frames = []
    for s in slides:
        canvas = Image.new("RGB", (width, height), "white")
        canvas.paste(s, (0, 0))
        frames.append(canvas)
    ms = int(round(interval * 1000))
    durations = [ms] * (len(frames) - 1) + [3 * ms]
    frames[0].save(path, format=ANIMATION_FORMATS[suffix], save_all=True,
                   append_images=frames[1:], duration=durations, loop=0)
    return len(frames)
