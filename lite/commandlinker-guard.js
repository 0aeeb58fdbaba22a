// nbtape's guard for CVE-2026-42557 in the JupyterLab 4.4.5 that JupyterLite 0.6 ships.
//
// Lab's command linker runs the command named by any clicked element's
// data-commandlinker-command, and that version's HTML sanitizer lets a button in a
// notebook's output or Markdown keep the attribute: one click on a crafted notebook
// runs Lab commands (code in the kernel among them).  lite/build.py loads this
// script first on every page of the site: a click inside a notebook's rendered
// content on such an element stops here, in the capture phase, before it reaches
// the linker's listener on document.body.  Lab's own buttons (toolbars, menus,
// launcher) are outside rendered content and work as before.
"use strict";
window.addEventListener("click", (event) => {
  const target = event.target instanceof Element ? event.target : null;
  const linked = target && target.closest("[data-commandlinker-command]");
  if (linked && linked.closest(".jp-OutputArea-output, .jp-RenderedHTMLCommon")) {
    event.stopPropagation();
    event.preventDefault();
    console.warn("nbtape: a command button inside a notebook's content was not run " +
                 "(CVE-2026-42557; see docs/teaching.md)");
  }
}, true);
