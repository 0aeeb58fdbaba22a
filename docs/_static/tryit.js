// "Try it" on the API pages: each docstring example gets a button that runs it in the
// reader's browser, in Pyodide (the Python that JupyterLite's kernel runs), loaded from
// the JupyterLite site served beside this one (lite/static/pyodide), with nbtape's
// wheel from that site's own package index (lite/pypi): nothing leaves the site.
// The site's JupyterLite build has the Lab app only (no REPL app to open with the code),
// so the example runs here, as doctest runs it: each ">>>" statement in turn, the value
// of each expression shown.
(function () {
  "use strict";
  var pyodide = null;      // one Python per page, started by the first "Try it"

  // As doctest does: the example runs in (a copy of) its module's namespace, each
  // ">>>" statement in turn, every expression's value shown.
  var RUNNER = [
    "import importlib, sys, traceback",
    "def _nbtape_namespace(qualname):",
    "    parts, obj = qualname.split('.'), None",
    "    for i in range(len(parts), 0, -1):",
    "        try:",
    "            obj, rest = importlib.import_module('.'.join(parts[:i])), parts[i:]",
    "            break",
    "        except ImportError:",
    "            continue",
    "    for part in rest:",
    "        obj = getattr(obj, part)",
    "    module = sys.modules[getattr(obj, '__module__', None) or obj.__name__]",
    "    return dict(vars(module), __name__='__main__')",
    "def _nbtape_try(chunks, qualname):",
    "    try:",
    "        ns = _nbtape_namespace(qualname)",
    "    except Exception:",
    "        ns = {'__name__': '__main__'}",
    "    for chunk in chunks:",
    "        try:",
    "            exec(compile(chunk, '<example>', 'single'), ns)",
    "        except BaseException:",
    "            traceback.print_exc(limit=-1, file=sys.stdout)",
    "            return",
  ].join("\n");

  // the example's statements, doctest prompts stripped, expected outputs left out
  function exampleChunks(pre) {
    var chunks = [];
    pre.textContent.split("\n").forEach(function (line) {
      if (line.startsWith(">>>")) chunks.push(line.slice(4));
      else if (line.startsWith("...") && chunks.length) {
        chunks[chunks.length - 1] += "\n" + line.slice(4);
      }
    });
    return chunks.map(function (c) { return c + "\n"; });
  }

  function root() {
    return new URL((document.documentElement.dataset.content_root || "./") + "lite/",
                   location.href).href;
  }

  function loadScript(src) {
    return new Promise(function (resolve, reject) {
      var s = document.createElement("script");
      s.src = src;
      s.onload = resolve;
      s.onerror = function () { reject(new Error("could not load " + src)); };
      document.head.appendChild(s);
    });
  }

  async function startPython(say) {
    var lite = root();
    say("starting Python in your browser (Pyodide)...");
    await loadScript(lite + "static/pyodide/pyodide.js");
    var py = await window.loadPyodide({ indexURL: lite + "static/pyodide/" });
    say("loading numpy and nbtape...");
    await py.loadPackage(["numpy", "micropip"]);
    var index = await (await fetch(lite + "pypi/all.json")).json();
    // nbtape and the pure-Python packages it imports, from the site's own index
    var wheels = ["nbtape", "graphviz"].map(function (name) {
      var releases = index[name].releases;
      var files = releases[Object.keys(releases).pop()];
      return new URL(files[0].url, lite + "pypi/").href;
    });
    var micropip = py.pyimport("micropip");
    await micropip.install.callKwargs(wheels, { deps: false });
    py.runPython(RUNNER);
    // the notebook layer's examples also need IPython and ipywidgets: loaded on demand
    py.nbtapeNotebook = async function () {
      if (!py.nbtapeNotebookReady) {
        py.nbtapeNotebookReady = (async function () {
          await py.loadPackage(["ipython"]);
          var extra = ["ipywidgets", "comm"].map(function (name) {
            var releases = index[name].releases;
            return new URL(releases[Object.keys(releases).pop()][0].url, lite + "pypi/").href;
          });
          await micropip.install.callKwargs(extra, { deps: false });
        })();
      }
      return py.nbtapeNotebookReady;
    };
    return py;
  }

  var NOTEBOOK = /\b(inspect|TrainingMonitor|TapePlayer|Inspector|Snapshot|TapeMagics|ipywidgets|IPython)\b|^nbtape\.notebook\./;

  function qualname(block) {
    var dl = block.closest("dl.py");
    var dt = dl && dl.querySelector(":scope > dt[id]");
    return dt ? dt.id : "";
  }

  async function run(pre, output) {
    var say = function (text) { output.textContent = text; };
    try {
      if (!pyodide) pyodide = startPython(say);
      var py = await pyodide;
      var lines = [];
      py.setStdout({ batched: function (s) { lines.push(s); } });
      py.setStderr({ batched: function (s) { lines.push(s); } });
      var chunks = exampleChunks(pre), name = qualname(pre);
      if (NOTEBOOK.test(chunks.join("")) || NOTEBOOK.test(name)) {
        say("loading IPython and ipywidgets...");
        await py.nbtapeNotebook();
      }
      say("running...");
      py.globals.get("_nbtape_try")(py.toPy(chunks), name);
      output.textContent = lines.join("\n") || "(no output)";
      output.classList.add("nbtape-tryit-done");
    } catch (err) {
      pyodide = null;
      output.textContent = "Could not run the example here: " + err;
      output.classList.add("nbtape-tryit-failed");
    }
  }

  function addButton(block) {
    var pre = block.querySelector("pre");
    if (!pre || pre.textContent.indexOf(">>>") < 0) return;
    var button = document.createElement("button");
    button.className = "nbtape-tryit-button";
    button.type = "button";
    button.textContent = "Try it";
    button.title = "Run this example in your browser (Python in the page, no server)";
    button.addEventListener("click", function () {
      var output = block.nextElementSibling;
      if (!output || !output.classList.contains("nbtape-tryit-output")) {
        output = document.createElement("pre");
        output.className = "nbtape-tryit-output";
        block.insertAdjacentElement("afterend", output);
      }
      output.classList.remove("nbtape-tryit-done", "nbtape-tryit-failed");
      button.textContent = "Run it again";
      run(pre, output);
    });
    block.insertAdjacentElement("beforebegin", button);
  }

  document.addEventListener("DOMContentLoaded", function () {
    if (location.pathname.indexOf("/reference/") < 0) return;
    document.querySelectorAll("dl.py div.doctest").forEach(addButton);
  });
})();
