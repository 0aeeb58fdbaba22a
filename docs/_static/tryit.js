// "Try it" on the API pages: each docstring example gets a button that runs it in the
// reader's browser, in JupyterLite's REPL (Pyodide) served beside this site under lite/.
// Nothing leaves the site: nbtape is installed from the lite site's own package index.
(function () {
  "use strict";
  var INSTALL = "try:\n    import nbtape\nexcept ImportError:\n" +
    "    %pip install -q nbtape\nimport numpy as np\nimport nbtape as nt";

  // the example's code: doctest prompts stripped, expected outputs left out
  function exampleCode(pre) {
    var lines = pre.textContent.split("\n"), code = [];
    lines.forEach(function (line) {
      if (line.startsWith(">>> ") || line === ">>>") code.push(line.slice(4));
      else if (line.startsWith("... ") || line === "...") code.push(line.slice(4));
    });
    return code.join("\n");
  }

  function replUrl(code) {
    var root = document.documentElement.dataset.content_root || "./";
    var q = new URLSearchParams();
    q.append("kernel", "python");
    q.append("toolbar", "1");
    q.append("showBanner", "0");
    q.append("code", INSTALL);
    q.append("code", code);
    q.append("execute", "1");
    return root + "lite/repl/index.html?" + q.toString();
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
      var frame = block.nextElementSibling;
      if (frame && frame.classList.contains("nbtape-tryit-frame")) frame.remove();
      frame = document.createElement("iframe");
      frame.className = "nbtape-tryit-frame";
      frame.title = "The example running in JupyterLite";
      frame.src = replUrl(exampleCode(pre));
      block.insertAdjacentElement("afterend", frame);
      button.textContent = "Run it again";
    });
    block.insertAdjacentElement("beforebegin", button);
  }

  document.addEventListener("DOMContentLoaded", function () {
    if (!document.querySelector("meta[name='nbtape-tryit']") &&
        location.pathname.indexOf("/reference/") < 0) return;
    document.querySelectorAll("dl.py div.highlight-pycon, dl.py div.doctest")
      .forEach(addButton);
  });
})();
