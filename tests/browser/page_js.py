"""The JavaScript the browser tests run inside the Lab page (via ``page.evaluate``).

Each snippet is a function of one argument, most of them of the notebook's path.
They reach Lab through ``window.jupyterapp`` (the server exposes it) for facts the
DOM does not state reliably, such as which cell an output belongs to or whether the
kernel has answered every request, and read the DOM for everything a student sees.
"""

# Shared by the snippets below: the NotebookPanel showing `path`, and its cells.
PRELUDE = """
const panelFor = (path) => {
  const app = window.jupyterapp;
  if (!app) return null;
  for (const w of app.shell.widgets('main')) {
    if (w.context && w.context.path === path && w.content && w.sessionContext) return w;
  }
  return null;
};
const cellAt = (path, k) => panelFor(path).content.widgets[k];
const widgetOutputs = (node) => Array.from(node.querySelectorAll('.jp-OutputArea-output'))
  .filter(el => !el.hasAttribute('data-mime-type'));
"""

OPEN = """
async (path) => {
  await window.jupyterapp.commands.execute('docmanager:open', {path, factory: 'Notebook'});
  return true;
}"""

READY = PRELUDE + """
(path) => {
  const p = panelFor(path);
  if (!p || !p.context.isReady || !p.sessionContext.session) return false;
  const k = p.sessionContext.session.kernel;
  return !!k && k.status === 'idle';
}"""

STATUS = PRELUDE + """
(path) => {
  const p = panelFor(path);
  const dialogs = Array.from(document.querySelectorAll('.jp-Dialog'))
    .map(d => d.innerText.trim().slice(0, 500));
  if (!p) return {panel: false, dialogs};
  const k = p.sessionContext.session && p.sessionContext.session.kernel;
  const run = window.__nbtapeRunAll;
  return {panel: true, ready: p.context.isReady, kernel: k ? k.status : 'no kernel',
          kernelName: k ? k.name : null, dialogs,
          runAll: run ? {done: run.done, ok: run.ok, error: run.error,
                         executeRequests: run.traffic.sent, replies: run.traffic.replied}
                      : 'not started'};
}"""

# Run All, counting the kernel's execute requests and replies on the way.  Neither
# Run All's promise nor the "[*]" prompts say when the kernel is done: after a cell
# tagged raises-exception fails, Lab settles the promise and resets the prompts of the
# cells after it to "[ ]" while the kernel (told not to stop on that error) still runs
# them, and a cell with hidden input shows no prompt at all.  Requests sent = replies
# received, with the kernel idle, does say it.
RUN_ALL = PRELUDE + """
(path) => {
  const app = window.jupyterapp;
  const p = panelFor(path);
  app.shell.activateById(p.id);
  const traffic = {sent: 0, replied: 0};
  p.sessionContext.session.kernel.anyMessage.connect((_, {msg, direction}) => {
    const type = msg.header.msg_type;
    if (direction === 'send' && type === 'execute_request') traffic.sent += 1;
    if (direction === 'recv' && type === 'execute_reply') traffic.replied += 1;
  });
  window.__nbtapeRunAll = {done: false, traffic};
  app.commands.execute('notebook:run-all-cells').then(
    ok => { window.__nbtapeRunAll.done = true; window.__nbtapeRunAll.ok = ok; },
    err => { window.__nbtapeRunAll.done = true; window.__nbtapeRunAll.error = String(err); });
}"""

# Finished: Run All has sent its requests, the kernel answered each and is idle, and
# no widget is still loading.
FINISHED = PRELUDE + """
(path) => {
  const p = panelFor(path);
  const run = window.__nbtapeRunAll;
  if (!p || !run || !run.done) return false;
  if (run.traffic.sent === 0 || run.traffic.replied < run.traffic.sent) return false;
  const k = p.sessionContext.session && p.sessionContext.session.kernel;
  if (!k || k.status !== 'idle') return false;
  for (const cell of p.content.widgets) {
    for (const el of widgetOutputs(cell.node)) {
      if (el.innerText.trim().startsWith('Loading widget')) return false;
    }
  }
  return true;
}"""

# Everything a test needs about each cell: model facts and what its outputs look like.
CELLS = PRELUDE + """
(path) => {
  const p = panelFor(path);
  const describePicture = (el, out) => {
    const img = el.querySelector('img');
    const svg = el.querySelector('svg');
    const box = (img || svg || el).getBoundingClientRect();
    out.width = Math.round(box.width); out.height = Math.round(box.height);
    if (img) {
      out.how = 'img';
      out.decoded = img.complete && img.naturalWidth > 0;
      const src = img.getAttribute('src') || '';
      let body = '';
      try { body = src.startsWith('data:image/svg+xml')
              ? decodeURIComponent(src.slice(src.indexOf(',') + 1)) : ''; } catch (e) {}
      out.isSvg = body.includes('<svg');
      out.svgText = body.replace(/<[^>]*>/g, ' ').replace(/\\s+/g, ' ').slice(0, 800);
    } else if (svg) {
      out.how = 'inline';
      out.decoded = true;
      out.isSvg = true;
      out.svgText = svg.textContent.replace(/\\s+/g, ' ').slice(0, 800);
    } else {
      out.how = 'none'; out.decoded = false; out.isSvg = false; out.svgText = '';
    }
  };
  const describeWidget = (el, out) => {
    const text = el.innerText.trim();
    // core ipywidgets draw into .jupyter-widgets, nbtape's anywidget front ends into
    // .nbtape-widget
    const inner = el.classList.contains('jupyter-widgets') ? el
      : el.querySelector('.jupyter-widgets, .nbtape-widget');
    const box = el.getBoundingClientRect();
    out.width = Math.round(box.width); out.height = Math.round(box.height);
    if (text.includes('Error displaying widget')
        || el.querySelector('.jupyter-widgets-error-widget')) out.widget = 'error';
    else if (text.startsWith('Loading widget')) out.widget = 'loading';
    else if (!inner || box.height < 2) out.widget = 'empty';
    else out.widget = 'ok';
    out.svgCount = el.querySelectorAll('svg').length;
  };
  return p.content.widgets.map((cell, k) => {
    const m = cell.model;
    const info = {index: k, type: m.type, source: m.sharedModel.getSource(),
                  tags: (m.getMetadata && m.getMetadata('tags')) || [],
                  executionCount: m.type === 'code' ? m.executionCount : null,
                  prompt: (cell.node.querySelector('.jp-InputPrompt') || {}).textContent || '',
                  outputs: []};
    if (m.type !== 'code') return info;
    const children = cell.node.querySelectorAll('.jp-OutputArea-child');
    for (let i = 0; i < m.outputs.length; i++) {
      const j = m.outputs.get(i).toJSON();
      const child = children[i];
      const el = child ? child.querySelector('.jp-OutputArea-output') : null;
      const out = {type: j.output_type, name: j.name || null,
                   mimes: j.data ? Object.keys(j.data) : [],
                   domMime: el ? el.getAttribute('data-mime-type') : null,
                   text: el ? el.innerText.slice(0, 3000) : '',
                   error: j.output_type === 'error' ? `${j.ename}: ${j.evalue}` : null};
      if (el && out.mimes.includes('image/svg+xml') && out.domMime === 'image/svg+xml')
        describePicture(el, out);
      if (el && out.mimes.includes('application/vnd.jupyter.widget-view+json')
          && !out.domMime) describeWidget(el, out);
      const images = el ? Array.from(el.querySelectorAll('img')) : [];
      out.brokenImages = images.filter(im => !(im.complete && im.naturalWidth > 0)).length;
      info.outputs.push(out);
    }
    return info;
  });
}"""

# Sample a widget's visible text every few ms inside the page (the Python side is far
# too slow and irregular to catch each redraw).  `column`/`row` pick one table cell (the
# inspector's value of a variable); otherwise the widget's whole text is sampled.
# Each sample also notes whether `marker` has appeared in the cell's printed output
# yet, i.e. whether the loop had ended when the sample was taken.
SAMPLE_START = PRELUDE + """
({path, cell, marker, column, row, every}) => {
  if (window.__nbtapeSampler) clearInterval(window.__nbtapeSampler.timer);
  const state = {samples: [], ticks: 0, t0: performance.now()};
  const read = () => {
    const c = cellAt(path, cell);
    if (!c) return null;
    const el = widgetOutputs(c.node)[0];
    if (!el) return null;
    if (!column) return el.innerText.trim();
    for (const table of el.querySelectorAll('table')) {
      const heads = Array.from(table.querySelectorAll('thead th')).map(th => th.innerText.trim());
      const col = heads.indexOf(column);
      if (col < 0) continue;
      for (const tr of table.querySelectorAll('tbody tr')) {
        const tds = tr.querySelectorAll('td');
        if (tds.length > col && tds[0].innerText.trim().split(/\\s/)[0] === row)
          return tds[col].innerText.trim();
      }
    }
    return null;
  };
  const ended = () => {
    const c = cellAt(path, cell);
    if (!c) return false;
    return Array.from(c.node.querySelectorAll(
      '.jp-OutputArea-output[data-mime-type="application/vnd.jupyter.stdout"]'))
      .some(el => el.innerText.includes(marker));
  };
  state.timer = setInterval(() => {
    state.ticks += 1;
    const s = {t: Math.round(performance.now() - state.t0), text: read(), ended: ended()};
    const last = state.samples[state.samples.length - 1];
    if (!last || last.text !== s.text || last.ended !== s.ended) state.samples.push(s);
  }, every);
  window.__nbtapeSampler = state;
}"""

SAMPLE_PEEK = """
() => window.__nbtapeSampler ? window.__nbtapeSampler.samples : []"""

SAMPLE_STOP = """
() => {
  const s = window.__nbtapeSampler;
  if (!s) return null;
  clearInterval(s.timer);
  window.__nbtapeSampler = null;
  return {samples: s.samples, ticks: s.ticks};
}"""


# A Lab page fit for the next test: Lab started, no dialog over it, no document open.
HEALTHY = """
() => !!window.jupyterapp && !document.querySelector('.jp-Dialog')
  && Array.from(window.jupyterapp.shell.widgets('main')).every(w => !w.context)"""

# Close every open document without "save changes?" questions (the copies are
# throwaway); the kernels are shut down through the server's API afterwards.
CLOSE_DOCUMENTS = """
() => {
  for (const w of Array.from(window.jupyterapp.shell.widgets('main'))) {
    if (w.context) { w.context.model.dirty = false; w.dispose(); }
  }
}"""
