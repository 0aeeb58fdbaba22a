// The nbtape site's service worker: the site works offline after the first visit.
//
// lite/build.py writes this file over JupyterLite's own service-worker.js (which it
// keeps beside it as jupyterlite-service-worker.js), with the site's file list and a
// build id in place of the two placeholders below.
//
// On install it stores every file of the site in the browser's Cache Storage, and
// from then on answers the site's requests from there: a reload, another tutorial
// or a new kernel (Pyodide's WebAssembly file first) needs no network.  A new build
// has a new id, so its worker installs again and the old cache is deleted.
//
// JupyterLite's own worker still answers what only it can (the kernel's access to
// the notebooks in browser storage, input()): it is loaded here, and its fetch
// handler gets every request this one does not answer.
"use strict";

const NBTAPE_FILES = "__NBTAPE_FILES__";     // the site's files, relative to its root
const NBTAPE_CACHE = "nbtape-site-__NBTAPE_BUILD__";
const JUPYTERLITE_ONLY = ["/api/drive", "/api/stdin", "/api/service-worker-heartbeat"];

const jupyterliteFetch = [];
const addListener = self.addEventListener.bind(self);
// JupyterLite's worker registers its handlers through this: its fetch handler is
// kept to be called for the requests below that are not the site's files
self.addEventListener = (type, listener, options) => {
  if (type === "fetch") jupyterliteFetch.push(listener);
  else addListener(type, listener, options);
};
importScripts("./jupyterlite-service-worker.js");
self.addEventListener = addListener;

function siteUrl(path) {
  return new URL(path, self.registration.scope).href;
}

addListener("install", (event) => {
  event.waitUntil(caches.open(NBTAPE_CACHE).then((cache) => cache.addAll(NBTAPE_FILES.map(siteUrl))));
});

addListener("activate", (event) => {
  event.waitUntil(caches.keys().then((names) => Promise.all(
    names.filter((n) => n.startsWith("nbtape-site-") && n !== NBTAPE_CACHE)
      .map((n) => caches.delete(n)))));
});

function isSiteFile(request) {
  if (request.method !== "GET") return false;
  const url = new URL(request.url);
  if (!url.href.startsWith(self.registration.scope)) return false;
  return !JUPYTERLITE_ONLY.some((p) => url.pathname.includes(p));
}

async function fromSite(request) {
  const cache = await caches.open(NBTAPE_CACHE);
  const url = new URL(request.url);
  url.search = "";
  url.hash = "";
  if (url.pathname.endsWith("/")) url.pathname += "index.html";
  const cached = await cache.match(url.href);
  if (cached) return cached;
  try {
    return await fetch(request);
  } catch (error) {
    // offline, and not a file of the site: what the site itself answers
    return new Response("Not found (offline, and not a file of this site)",
                        {status: 404, headers: {"Content-Type": "text/plain"}});
  }
}

addListener("fetch", (event) => {
  if (isSiteFile(event.request)) {
    event.respondWith(fromSite(event.request));
    return;
  }
  for (const listener of jupyterliteFetch) listener.call(self, event);
});
