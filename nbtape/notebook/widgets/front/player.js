// nt.TapePlayer's front end (anywidget ES module; no library, no outside file).
// Python draws every picture and caption (traits _title, _picture, _caption, _story);
// this module lays them out, and turns the reader's clicks into changes of the
// `frame` and `playing` traits.  Playing runs one timer per widget model (in
// `initialize`), so a player shown twice still steps one frame at a time.

function setFrame(model, k) {
  const last = model.get("last");
  model.set("frame", Math.max(0, Math.min(last, k)));
  model.save_changes();
}

function setPlaying(model, on) {
  if (model.get("playing") !== on) {
    model.set("playing", on);
    model.save_changes();
  }
}

function initialize({ model }) {
  let timer = null;
  function stop() {
    if (timer !== null) clearInterval(timer);
    timer = null;
  }
  function tick() {
    const k = model.get("frame"), last = model.get("last");
    if (k >= last) { stop(); setPlaying(model, false); return; }
    setFrame(model, k + 1);
    if (k + 1 >= last) { stop(); setPlaying(model, false); }
  }
  function follow() {
    stop();
    if (model.get("playing")) {
      if (model.get("frame") >= model.get("last")) setFrame(model, 0);
      timer = setInterval(tick, Math.max(20, model.get("interval") * 1000));
    }
  }
  model.on("change:playing", follow);
  model.on("change:interval", follow);
  follow();
  return () => {
    stop();
    model.off("change:playing", follow);
    model.off("change:interval", follow);
  };
}

function el(tag, style, text) {
  const e = document.createElement(tag);
  if (style) e.style.cssText = style;
  if (text !== undefined) e.textContent = text;
  return e;
}

function render({ model, el: root }) {
  const ui = el("div", "font-family:sans-serif;font-size:15px;line-height:1.4");
  ui.className = "nbtape-widget nbtape-player";
  const title = el("div", "font-size:15px;margin:2px 0 6px 0");
  title.className = "nbtape-title";
  const bar = el("div", "display:flex;flex-wrap:wrap;gap:4px;align-items:center");
  bar.className = "nbtape-controls";
  function button(label, tip, fn) {
    const b = el("button", "font-size:15px;padding:3px 10px;cursor:pointer", label);
    b.type = "button"; b.title = tip; b.onclick = fn; bar.appendChild(b);
    return b;
  }
  const play = button("\u25b6 play", "play",
                      () => setPlaying(model, !model.get("playing")));
  play.className = "nbtape-play";
  const slider = el("input", "width:30%;min-width:120px");
  slider.type = "range"; slider.min = 0; slider.step = 1; slider.title = "frame";
  slider.className = "nbtape-slider";
  slider.oninput = () => { setPlaying(model, false); setFrame(model, +slider.value); };
  bar.appendChild(slider);
  const go = (fn) => () => { setPlaying(model, false); setFrame(model, fn(model.get("frame"))); };
  button("|\u25c0", "first frame", go(() => 0));
  button("\u25c0", "one frame back", go((k) => k - 1));
  button("\u25b6", "one frame on", go((k) => k + 1));
  button("\u21e4 reverse pass", "jump to the reverse pass", go(() => model.get("reverse")));
  button("\u25b6|", "last frame", go(() => model.get("last")));
  const picture = el("div", "max-width:100%;overflow:auto;margin-top:6px");
  picture.className = "nbtape-picture";
  const caption = el("div", "font-size:18px;line-height:1.4;padding:6px 0;white-space:normal");
  caption.className = "nbtape-caption";
  const story = el("div", "max-height:16em;overflow:auto;width:100%");
  story.className = "nbtape-story";
  // a click on a step of the list jumps to it
  story.onclick = (event) => {
    const li = event.target.closest ? event.target.closest("li[value]") : null;
    if (li) { setPlaying(model, false); setFrame(model, +li.getAttribute("value")); }
  };
  [title, bar, picture, caption, story].forEach((e) => ui.appendChild(e));
  root.appendChild(ui);

  function drawControls() {
    slider.max = model.get("last");
    slider.value = model.get("frame");
    const on = model.get("playing");
    play.textContent = on ? "\u275a\u275a pause" : "\u25b6 play";
    play.title = on ? "pause" : "play";
  }
  function drawFrame() {
    title.innerHTML = model.get("_title");
    picture.innerHTML = model.get("_picture");
    caption.innerHTML = model.get("_caption");
    story.innerHTML = model.get("_story");
    story.querySelectorAll("li[value]").forEach((li) => { li.style.cursor = "pointer"; });
    drawControls();
  }
  // one name per call: marimo's model, unlike Backbone's, takes no lists of names
  const events = [["_title", drawFrame], ["_picture", drawFrame], ["_caption", drawFrame],
                  ["_story", drawFrame], ["frame", drawControls], ["last", drawControls],
                  ["playing", drawControls]];
  events.forEach(([name, fn]) => model.on("change:" + name, fn));
  drawFrame();
  return () => events.forEach(([name, fn]) => model.off("change:" + name, fn));
}

export default { initialize, render };
