"""The tape player without a kernel: SVG frames stepped by plain JavaScript in one HTML block.

This is what ``nt.TapePlayer`` leaves in a saved notebook and what
``player.save("backprop.html")`` writes: the frames' pictures, captions and a
small script (no external file, no library) that builds the buttons, the
slider, the Play button and the list of steps.  It runs in a trusted notebook,
on nbviewer-style renderers, on a documentation site and as a file opened in a
browser.

Sharing.  Consecutive frames of a tape differ in a few attributes (a fill, a
grad written into a box), so only the first picture is stored whole: every
other one is a list of ranges of the previous distinct picture's tokens (the
text between spaces and newlines) and the new text between them, and identical
pictures are stored once.  A 20-op player is about a seventh of its pictures'
total size.

Where scripts do not run (an untrusted notebook: JupyterLab strips scripts and
inline SVG from its HTML), the block shows what needs neither: the last frame's
picture as a PNG ``<img>`` (an SVG data URI where no PNG can be drawn, as in
JupyterLite) and every frame's caption.
"""
import base64
import difflib
import html
import json
import re

# The tokens frames are diffed by; the script splits with the same expression.
TOKENS = re.compile(r"[^ \n]*[ \n]?")


def tokens(text):
    """``text`` cut after each space and newline (joined again, they are ``text``).

    >>> tokens('<g id="a">\\n<path d="M1 2"/>')
    ['<g ', 'id="a">\\n', '<path ', 'd="M1 ', '2"/>']
    """
    return [t for t in TOKENS.findall(text) if t]


def encode_pictures(svgs):
    """``(pictures, index)``: distinct ``svgs`` as deltas, and each frame's picture number.

    ``pictures[0]`` is the first picture's text; ``pictures[j]`` a list of
    ``[start, end]`` token ranges of picture ``j - 1`` and strings of new text.
    A frame without a picture (``None``) has index ``-1``.

    >>> pics, index = encode_pictures(["<a b c>", "<a b c>", "<a x c>", None])
    >>> index, pics
    ([0, 0, 1, -1], ['<a b c>', [[0, 1], 'x ', [2, 3]]])
    >>> decode_pictures(pics) == ["<a b c>", "<a x c>"]
    True
    """
    distinct, index, seen = [], [], {}
    for svg in svgs:
        if svg is None:
            index.append(-1)
            continue
        if svg not in seen:
            seen[svg] = len(distinct)
            distinct.append(svg)
        index.append(seen[svg])
    pictures, before = [], None
    for svg in distinct:
        now = tokens(svg)
        if before is None:
            pictures.append(svg)
        else:
            ops = []
            matcher = difflib.SequenceMatcher(None, before, now, autojunk=False)
            for tag, i1, i2, j1, j2 in matcher.get_opcodes():
                if tag == "equal":
                    ops.append([i1, i2])
                elif j2 > j1:
                    ops.append("".join(now[j1:j2]))
            pictures.append(ops)
        before = now
    return pictures, index


def decode_pictures(pictures):
    """The pictures' texts again (what the player's script does, in Python for tests)."""
    out, before = [], None
    for p in pictures:
        if isinstance(p, str):
            text = p
        else:
            text = "".join(op if isinstance(op, str) else "".join(before[op[0]:op[1]])
                           for op in p)
        out.append(text)
        before = tokens(text)
    return out


def _json(data):
    # inside <script>: no "</script>" or "<!--" may appear, so every "<" is escaped
    return json.dumps(data, ensure_ascii=False, separators=(",", ":")).replace("<", "\\u003c")


# The player's script: finds its block (the script's parent), builds the controls and
# shows frame `start`.  Plain ES2015, no external file; written for readers too.
PLAYER_SCRIPT = r"""
(function () {
  var me = document.currentScript;
  var root = me ? me.parentNode : null;
  if (!root || root.getAttribute("data-ready")) {
    var all = document.querySelectorAll(".nbtape-static-player:not([data-ready])");
    root = all.length ? all[all.length - 1] : null;
  }
  if (!root) return;
  root.setAttribute("data-ready", "1");
  var data = JSON.parse(root.querySelector("script.nbtape-frames").textContent);
  var RE = /[^ \n]*[ \n]?/g, texts = [], before = null;
  data.pictures.forEach(function (p) {
    var text = p;
    if (typeof p !== "string") {
      var parts = [];
      p.forEach(function (op) {
        parts.push(typeof op === "string" ? op : before.slice(op[0], op[1]).join(""));
      });
      text = parts.join("");
    }
    texts.push(text);
    before = (text.match(RE) || []).filter(function (t) { return t; });
  });
  var n = data.captions.length, last = n - 1, k = data.start, timer = null;
  function el(tag, style, text) {
    var e = document.createElement(tag);
    if (style) e.style.cssText = style;
    if (text !== undefined) e.textContent = text;
    return e;
  }
  var ui = el("div", "font-family:sans-serif;font-size:15px;line-height:1.4");
  var title = el("div", "font-size:15px;margin:2px 0 6px 0");
  title.className = "nbtape-title";
  var bar = el("div", "display:flex;flex-wrap:wrap;gap:4px;align-items:center");
  function button(label, tip, fn) {
    var b = el("button", "font-size:15px;padding:3px 10px;cursor:pointer", label);
    b.type = "button"; b.title = tip; b.onclick = fn; bar.appendChild(b);
    return b;
  }
  var play = button("\u25b6 play", "play", function () { timer ? stop() : start(); });
  play.className = "nbtape-play";
  var slider = el("input", "width:30%;min-width:120px");
  slider.type = "range"; slider.min = 0; slider.max = last; slider.step = 1;
  slider.title = "frame";
  slider.oninput = function () { stop(); show(+slider.value); };
  bar.appendChild(slider);
  button("|\u25c0", "first frame", function () { stop(); show(0); });
  button("\u25c0", "one frame back", function () { stop(); show(Math.max(0, k - 1)); });
  button("\u25b6", "one frame on", function () { stop(); show(Math.min(last, k + 1)); });
  button("\u21e4 reverse pass", "jump to the reverse pass",
         function () { stop(); show(data.reverse); });
  button("\u25b6|", "last frame", function () { stop(); show(last); });
  var picture = el("div", "max-width:100%;overflow:auto;margin-top:6px");
  picture.className = "nbtape-picture";
  var caption = el("div", "font-size:18px;line-height:1.4;padding:6px 0");
  caption.className = "nbtape-caption";
  var list = el("ol", "margin:0;padding-left:3.2em;font-size:14px;line-height:1.35;" +
                "max-height:12em;overflow:auto;position:relative;white-space:normal;" +
                "overflow-wrap:anywhere");
  list.start = 0; list.className = "nbtape-story";
  var items = data.captions.map(function (c, i) {
    var li = el("li", "padding:1px 2px;cursor:pointer", c);
    li.value = i;
    li.onclick = function () { stop(); show(i); };
    list.appendChild(li);
    return li;
  });
  [title, bar, picture, caption, list].forEach(function (e) { ui.appendChild(e); });
  function show(j) {
    items[k].style.background = ""; items[k].style.fontWeight = "";
    k = j;
    slider.value = j;
    title.textContent = "Tape player \u00b7 frame " + j + " of " + last + " \u00b7 " +
      data.phases[j] + (data.drawn[j] !== j && data.pic[j] >= 0 ?
                        " (picture of frame " + data.drawn[j] + ")" : "");
    var p = data.pic[j];
    picture.innerHTML = p >= 0 ? texts[p] : "<i>" + data.nopicture + "</i>";
    caption.textContent = data.captions[j];
    var li = items[j];
    li.style.background = "#fde68a"; li.style.fontWeight = "600";
    // the list scrolls itself, never the page: the current step stays in sight
    var top = li.offsetTop, bottom = top + li.offsetHeight;
    if (top < list.scrollTop || bottom > list.scrollTop + list.clientHeight)
      list.scrollTop = Math.max(0, top - list.clientHeight / 3);
  }
  function tick() {
    if (k >= last) { stop(); return; }
    show(k + 1);
    if (k >= last) stop();
  }
  function start() {
    if (k >= last) show(0);
    play.textContent = "\u275a\u275a pause"; play.title = "pause";
    timer = setInterval(tick, data.interval);
  }
  function stop() {
    if (timer) clearInterval(timer);
    timer = null;
    play.textContent = "\u25b6 play"; play.title = "play";
  }
  root.querySelector(".nbtape-fallback").style.display = "none";
  root.appendChild(ui);
  show(k);
})();
"""


def player_block(captions, phases, svgs, start=0, interval_ms=1000, fallback_picture=None,
                 heading="nt.TapePlayer", nopicture="no picture", reverse=None):
    """The player as one ``<div>``: data, script, and the fallback shown without scripts.

    ``captions`` and ``phases`` (one per frame, as the title names them),
    ``svgs`` (each frame's ``<svg>`` text or ``None``; frames not drawn repeat the
    picture of the latest drawn frame before them), ``fallback_picture`` (an
    ``<img>`` or other markup shown where scripts do not run); ``reverse`` is the
    frame the reverse pass starts at (default: the last).

    >>> block = player_block(["a", "b"], ["start", "done"], ["<svg>1</svg>", "<svg>2</svg>"])
    >>> block.count("<script"), "<li>a</li>" in block
    (2, True)
    """
    n = len(captions)
    drawn, latest = [], None
    for k, svg in enumerate(svgs):
        latest = k if svg is not None else latest
        drawn.append(latest if latest is not None else k)
    pictures, index = encode_pictures([svgs[j] if svgs[j] is not None else None
                                       for j in drawn])
    reverse = n - 1 if reverse is None else reverse
    data = dict(captions=list(captions), phases=list(phases), pictures=pictures, pic=index,
                drawn=drawn, start=start, reverse=reverse, interval=int(interval_ms),
                nopicture=nopicture)
    items = "".join(f"<li>{html.escape(c)}</li>" for c in captions)
    fallback = (f'<div class="nbtape-fallback"><b>{html.escape(heading)}</b>: {n} frames '
                "(the buttons need JavaScript: a trusted notebook, or the page saved with "
                "<code>player.save(\"player.html\")</code>)"
                f"{'; the picture shows the last frame.' if fallback_picture else '.'}"
                f"{fallback_picture or ''}"
                f'<ol start="0" style="margin:0;font-size:14px;line-height:1.35;'
                f'white-space:normal">{items}</ol></div>')
    return (f'<div class="nbtape-static-player" style="font-family:sans-serif">{fallback}'
            f'<script type="application/json" class="nbtape-frames">{_json(data)}</script>'
            f"<script>{PLAYER_SCRIPT}</script></div>")


def png_img(png, alt):
    """An ``<img>`` showing PNG bytes (kept by notebooks' sanitizers, unlike inline SVG).

    >>> png_img(b"\\x89PNG", "x")
    '<img alt="x" style="max-width:100%" src="data:image/png;base64,iVBORw=="/>'
    """
    data = base64.b64encode(png).decode("ascii")
    return (f'<img alt="{html.escape(alt)}" style="max-width:100%" '
            f'src="data:image/png;base64,{data}"/>')


def svg_img(svg, alt):
    """An ``<img>`` of SVG text (where no PNG can be drawn: an image is never scripted).

    >>> svg_img("<svg/>", "x")
    '<img alt="x" style="max-width:100%" src="data:image/svg+xml;base64,PHN2Zy8+"/>'
    """
    data = base64.b64encode(svg.encode("utf-8")).decode("ascii")
    return (f'<img alt="{html.escape(alt)}" style="max-width:100%" '
            f'src="data:image/svg+xml;base64,{data}"/>')


def page(block, title="nbtape tape player"):
    """A standalone HTML page around ``block``.

    >>> page("<p>hi</p>").startswith("<!DOCTYPE html>")
    True
    """
    return (f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
            f"<title>{html.escape(title)}</title>"
            '<meta name="viewport" content="width=device-width, initial-scale=1"></head>'
            f'<body style="margin:16px">{block}</body></html>\n')
