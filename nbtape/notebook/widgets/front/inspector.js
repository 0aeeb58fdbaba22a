// nt.inspect's front end (anywidget ES module; no library, no outside file).
// Python draws the header and the table (traits _header, _table, _where); this
// module shows them and a pager whose buttons change the `page` trait.

function el(tag, style, text) {
  const e = document.createElement(tag);
  if (style) e.style.cssText = style;
  if (text !== undefined) e.textContent = text;
  return e;
}

function render({ model, el: root }) {
  const ui = el("div", "font-family:sans-serif");
  ui.className = "nbtape-widget nbtape-inspector";
  const header = el("div");
  header.className = "nbtape-header";
  const table = el("div", "max-width:100%;overflow-x:auto");
  table.className = "nbtape-table";
  const pager = el("div", "display:flex;gap:8px;align-items:center;margin-top:4px");
  pager.className = "nbtape-pager";
  function button(label, step) {
    const b = el("button", "font-size:15px;padding:3px 10px;cursor:pointer", label);
    b.type = "button";
    b.onclick = () => {
      const k = model.get("page") + step;
      if (k >= 0 && k < model.get("pages")) {
        model.set("page", k);
        model.save_changes();
      }
    };
    return b;
  }
  const prev = button("\u25c0 previous", -1), next = button("next \u25b6", 1);
  prev.className = "nbtape-previous"; next.className = "nbtape-next";
  const where = el("span", "font-size:14px");
  where.className = "nbtape-where";
  [prev, where, next].forEach((e) => pager.appendChild(e));
  [header, table, pager].forEach((e) => ui.appendChild(e));
  root.appendChild(ui);

  function draw() {
    header.innerHTML = model.get("_header");
    table.innerHTML = model.get("_table");
    where.textContent = model.get("_where");
    const page = model.get("page"), pages = model.get("pages");
    pager.style.display = pages > 1 ? "flex" : "none";
    prev.disabled = page <= 0;
    next.disabled = page + 1 >= pages;
  }
  // one name per call: marimo's model, unlike Backbone's, takes no lists of names
  const names = ["_header", "_table", "_where", "page", "pages"];
  names.forEach((name) => model.on("change:" + name, draw));
  draw();
  return () => names.forEach((name) => model.off("change:" + name, draw));
}

export default { render };
