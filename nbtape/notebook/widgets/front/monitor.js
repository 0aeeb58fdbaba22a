// nt.TrainingMonitor's front end (anywidget ES module; no library, no outside file).
// Python draws the headline, the progress text and the charts (traits _head,
// _rate, _charts, and _bar: the bar's shown, value, max and style); this module
// shows them.

const BAR_COLORS = { "": "#2196f3", success: "#4caf50", warning: "#ff9800" };

function el(tag, style) {
  const e = document.createElement(tag);
  if (style) e.style.cssText = style;
  return e;
}

function render({ model, el: root }) {
  const ui = el("div", "font-family:sans-serif");
  ui.className = "nbtape-widget nbtape-monitor-live";
  const head = el("div");
  head.className = "nbtape-head";
  const line = el("div", "display:flex;gap:8px;align-items:center;margin:4px 0");
  const track = el("div", "width:50%;height:14px;background:#e5e7eb;border-radius:3px;" +
                   "overflow:hidden");
  track.className = "nbtape-bar";
  track.setAttribute("role", "progressbar");
  const fill = el("div", "height:100%;width:0");
  track.appendChild(fill);
  const rate = el("div");
  rate.className = "nbtape-rate";
  const charts = el("div");
  charts.className = "nbtape-charts";
  [track, rate].forEach((e) => line.appendChild(e));
  [head, line, charts].forEach((e) => ui.appendChild(e));
  root.appendChild(ui);

  function draw() {
    head.innerHTML = model.get("_head");
    rate.innerHTML = model.get("_rate");
    charts.innerHTML = model.get("_charts");
    const bar = model.get("_bar") || {};
    track.style.display = bar.shown ? "block" : "none";
    const share = bar.max > 0 ? Math.min(1, bar.value / bar.max) : 0;
    fill.style.width = (100 * share).toFixed(2) + "%";
    fill.style.background = BAR_COLORS[bar.style] || BAR_COLORS[""];
    track.setAttribute("aria-valuenow", String(bar.value));
    track.setAttribute("aria-valuemax", String(bar.max));
  }
  // one name per call: marimo's model, unlike Backbone's, takes no lists of names
  const names = ["_head", "_rate", "_charts", "_bar"];
  names.forEach((name) => model.on("change:" + name, draw));
  draw();
  return () => names.forEach((name) => model.off("change:" + name, draw));
}

export default { render };
