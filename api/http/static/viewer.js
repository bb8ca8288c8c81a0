// folio viewer: plain JS, no build step, no network beyond this server.
//
// Highlight geometry: region boxes are in PDF points (origin top-left of the displayed page, y down).
// A page is shown as the server's PNG scaled to the page div's width, so one point is
// (displayed image width / page width in points) CSS pixels: rect = box * scale.
//
// API key: typed into the header field, kept in sessionStorage (this tab only, gone when it
// closes; never localStorage, which any script on this origin can read for ever), and sent as
// X-API-Key on every request. Images are fetched the same way and shown through blob: URLs, so
// the key never lands in a URL.
"use strict";

const $ = (id) => document.getElementById(id);
const state = {
  key: sessionStorage.getItem("folio.key") || "",
  docs: [],
  doc: null,          // {doc_id, version_id, filename}
  pages: [],          // [{page, width, height, image_url}]
  pkg: null,          // last ContextPackage
  highlight: null,    // {boxes: [{page, box:{x0,y0,x1,y1}, line}], outline: [{page, box}], regionId}
};
window.folio = state;  // for tests and debugging

class ApiError extends Error {
  constructor(status, body) {
    const err = (body && body.error) || {};
    super(err.message || `HTTP ${status}`);
    this.status = status;
    this.code = err.code;
  }
}

async function api(path, opts = {}) {
  const headers = Object.assign({}, opts.headers || {});
  if (state.key) headers["X-API-Key"] = state.key;
  if (opts.json !== undefined) {
    headers["Content-Type"] = "application/json";
    opts.body = JSON.stringify(opts.json);
  }
  const res = await fetch(path, { method: opts.method || "GET", headers, body: opts.body });
  const body = res.headers.get("content-type")?.includes("json") ? await res.json() : null;
  if (!res.ok) throw new ApiError(res.status, body);
  return body;
}

function setStatus(text, isError = false) {
  const el = $("status");
  el.textContent = text;
  el.classList.toggle("error", isError);
}

// ---------------------------------------------------------------------------------- documents
async function loadDocs(selectDoc) {
  const sel = $("doc-select");
  try {
    const res = await api("/v1/documents");
    state.docs = res.data;
  } catch (e) {
    sel.innerHTML = "<option value=''>(cannot list documents)</option>";
    setStatus(e.message, true);
    return;
  }
  sel.innerHTML = "<option value=''>(choose a document)</option>";
  for (const d of state.docs) {
    const o = document.createElement("option");
    o.value = d.doc_id;
    o.textContent = `${d.doc_id} — ${d.filename} (${d.pages} p.)`;
    sel.appendChild(o);
  }
  if (selectDoc) {
    sel.value = selectDoc;
  } else if (state.doc) {
    sel.value = state.doc.doc_id;
  }
}

async function openVersion(docId, versionId, filename) {
  if (state.doc && state.doc.doc_id === docId && state.doc.version_id === versionId) return;
  const res = await api(`/v1/documents/${encodeURIComponent(docId)}/versions/${encodeURIComponent(versionId)}/pages`);
  state.doc = { doc_id: docId, version_id: versionId, filename };
  state.pages = res.data;
  state.highlight = null;
  $("doc-select").value = docId;
  renderPages();
}

async function openLatest(docId) {
  const doc = state.docs.find((d) => d.doc_id === docId);
  if (doc) await openVersion(doc.doc_id, doc.version_id, doc.filename);
}

// -------------------------------------------------------------------------------------- pages
let observer = null;

function renderPages() {
  const box = $("pages");
  box.innerHTML = "";
  if (observer) observer.disconnect();
  observer = new IntersectionObserver(onVisible, { root: box, rootMargin: "800px 0px" });
  for (const p of state.pages) {
    const div = document.createElement("div");
    div.className = "page";
    div.dataset.page = p.page;
    div.style.aspectRatio = `${p.width} / ${p.height}`;
    const label = document.createElement("span");
    label.className = "label";
    label.textContent = `p. ${p.page}`;
    const overlay = document.createElement("div");
    overlay.className = "overlay";
    if (p.image_url) {
      const img = document.createElement("img");
      img.alt = `page ${p.page}`;
      img.dataset.src = p.image_url;
      img.addEventListener("load", () => { div.style.aspectRatio = ""; drawHighlight(); });
      div.appendChild(img);
      observer.observe(div);
    } else {
      const none = document.createElement("div");
      none.className = "noimg";
      none.textContent = "no page image stored";
      div.appendChild(none);
    }
    div.appendChild(overlay);
    div.appendChild(label);
    box.appendChild(div);
  }
}

// A page image's load, once per image: showRegion and the lazy observer share it, and it settles after the
// image's own load handler (registered first, in renderPages) has redrawn the highlight at the image's size.
const loading = new WeakMap();

function loadImage(img) {
  if (!loading.has(img)) loading.set(img, fetchImage(img));
  return loading.get(img);
}

async function fetchImage(img) {
  try {
    const res = await fetch(img.dataset.src, { headers: state.key ? { "X-API-Key": state.key } : {} });
    if (!res.ok) throw new Error(`HTTP ${res.status}`);
    const shown = new Promise((resolve) => {
      img.addEventListener("load", resolve, { once: true });
      img.addEventListener("error", resolve, { once: true });
    });
    img.src = URL.createObjectURL(await res.blob());
    await shown;
  } catch (e) {
    img.alt = `page image failed: ${e.message}`;
    loading.delete(img);
  }
}

function onVisible(entries) {
  for (const e of entries) {
    if (!e.isIntersecting) continue;
    const img = e.target.querySelector("img");
    if (img) loadImage(img);
    observer.unobserve(e.target);
  }
}

function pageDiv(n) {
  return document.querySelector(`#pages .page[data-page="${n}"]`);
}

// --------------------------------------------------------------------------------- highlights
function boxesOf(locators) {
  // Sentences (and paragraphs) carry line boxes: highlight the lines, not the enclosing rectangle.
  const out = [];
  for (const loc of locators) {
    const lines = loc.line_boxes || [];
    if (lines.length) for (const b of lines) out.push({ page: loc.page, box: b, line: true });
    else out.push({ page: loc.page, box: loc.bbox, line: false });
  }
  return out;
}

// An item's lines (ContextItem.lines: what made it relevant; an answer's supporting_lines) as
// locators, one per page in first-seen order, so that showRegion highlights those lines and not the
// item's locator (a page item's locator is the whole page).
function linesAsLocators(lines) {
  const byPage = new Map();
  for (const ln of lines || []) {
    if (!byPage.has(ln.page)) byPage.set(ln.page, { page: ln.page, bbox: ln.bbox, line_boxes: [] });
    byPage.get(ln.page).line_boxes.push(ln.bbox);
  }
  return [...byPage.values()];
}

// What a chip highlights: the item's lines when it has any, else its locators.
function highlightOf(it) {
  return it.lines && it.lines.length ? linesAsLocators(it.lines) : it.locators;
}

// What is outlined faintly around those lines: the item's locators (its page, for a page item), when lines are shown.
function outlineOf(it) {
  return it.lines && it.lines.length ? it.locators : null;
}

// A citation link's lines (ContextItem.viewer_url, an answer's viewer_url): `&lines=PAGE:x0,y0,x1,y1;...`, in
// whole PDF points (assembly.lines.viewer_url). Anyone can write such a link, so nothing in it is trusted: a
// spec over LINK_MAX_CHARS or with more than LINK_MAX_BOXES boxes is ignored whole; a box is kept only when it is
// five unsigned integers (no sign, fraction, exponent, NaN or markup), on one of the region's own pages, with
// x0 <= x1 and y0 <= y1, within the page (LINK_MARGIN points of slack, then clipped). The boxes only ever become
// numbers in style properties. None kept: the region is highlighted as without lines.
const LINK_MAX_BOXES = 24;
const LINK_MAX_CHARS = LINK_MAX_BOXES * 32;
const LINK_MARGIN = 2;
const LINK_BOX = /^(\d{1,5}):(\d{1,5}),(\d{1,5}),(\d{1,5}),(\d{1,5})$/;

function linkLines(spec, locators) {
  if (typeof spec !== "string" || !spec || spec.length > LINK_MAX_CHARS) return [];
  const parts = spec.split(";");
  if (parts.length > LINK_MAX_BOXES) return [];
  const out = [];
  for (const part of parts) {
    const m = LINK_BOX.exec(part);
    if (!m) continue;
    const [page, x0, y0, x1, y1] = m.slice(1).map(Number);
    const loc = (locators || []).find((l) => l.page === page);
    if (!loc || x0 > x1 || y0 > y1) continue;
    const w = loc.page_width, h = loc.page_height;
    if (!(x1 <= w + LINK_MARGIN && y1 <= h + LINK_MARGIN)) continue;
    out.push({ page, bbox: { x0: Math.min(x0, w), y0: Math.min(y0, h), x1: Math.min(x1, w), y1: Math.min(y1, h) } });
  }
  return out;
}

// One box shape everywhere in the API: {x0, y0, x1, y1} in PDF points, origin top-left (BBox).
function asList(b) {
  return [b.x0, b.y0, b.x1, b.y1];
}

function drawHighlight() {
  document.querySelectorAll(".overlay").forEach((o) => (o.innerHTML = ""));
  const h = state.highlight;
  if (!h) return;
  for (const { page, box } of h.outline) drawBox(page, box, "region-outline", h.regionId);
  for (const { page, box, line } of h.boxes) drawBox(page, box, line ? "hl line" : "hl", h.regionId);
}

function drawBox(page, box, className, regionId) {
  const div = pageDiv(page);
  const info = state.pages.find((p) => p.page === page);
  if (!div || !info) return;
  const img = div.querySelector("img");
  const shownWidth = img && img.complete && img.naturalWidth ? img.getBoundingClientRect().width : div.clientWidth;
  const scale = shownWidth / info.width;
  const [x0, y0, x1, y1] = asList(box);
  const r = document.createElement("div");
  r.className = className;
  r.dataset.region = regionId;
  r.style.left = `${x0 * scale}px`;
  r.style.top = `${y0 * scale}px`;
  r.style.width = `${Math.max(1, (x1 - x0) * scale)}px`;
  r.style.height = `${Math.max(1, (y1 - y0) * scale)}px`;
  div.querySelector(".overlay").appendChild(r);
}

// Highlight `locators` (their line boxes where they have them); `outline`, when given, is drawn faintly around
// them (the item's own box: its page, for a page item whose lines are shown).
async function showRegion(docId, versionId, filename, regionId, locators, outline = null) {
  await openVersion(docId, versionId, filename);
  const faint = (outline || []).map((l) => ({ page: l.page, box: l.bbox }));
  state.highlight = { regionId, boxes: boxesOf(locators), outline: faint };
  const first = state.highlight.boxes[0];
  const div = first && pageDiv(first.page);
  if (div) {
    const img = div.querySelector("img");
    if (img) await loadImage(img);
    // Scroll only the pages column (scrollIntoView would scroll every ancestor, the header too), to the
    // topmost box on the first page: the boxes come strongest first, and a table above the strongest line
    // would otherwise end up above the column's top, under the toolbar.
    const box = $("pages");
    const info = state.pages.find((p) => p.page === first.page);
    const scale = div.clientWidth / info.width;
    const top = div.getBoundingClientRect().top - box.getBoundingClientRect().top;
    const highest = Math.min(...state.highlight.boxes.filter((b) => b.page === first.page).map((b) => asList(b.box)[1]));
    box.scrollTop += top + highest * scale - 80;
  }
  drawHighlight();
}

window.addEventListener("resize", drawHighlight);

// ------------------------------------------------------------------------------------ context
function renderPackage(pkg) {
  state.pkg = pkg;
  const b = pkg.budget;
  $("budget-line").textContent = `${b.used} / ${b.limit} tokens (${b.tokenizer}) · ${pkg.items.length} items`;
  const list = $("items");
  list.innerHTML = "";
  if (pkg.refused) setStatus(`No usable evidence: ${pkg.refusal_reason || "retrieval was empty or weak"}`);
  for (const it of pkg.items) {
    const li = document.createElement("li");
    li.dataset.citation = it.citation_id;
    const chip = document.createElement("button");
    chip.className = "chip";
    chip.type = "button";
    chip.textContent = it.citation_id;
    chip.title = it.region_id;
    chip.addEventListener("click", async () => {
      document.querySelectorAll("#items li.active").forEach((x) => x.classList.remove("active"));
      li.classList.add("active");
      try {
        await showRegion(it.doc_id, it.version_id, it.filename, it.region_id, highlightOf(it), outlineOf(it));
      } catch (e) {
        setStatus(e.message, true);
      }
    });
    const meta = document.createElement("span");
    meta.className = "meta";
    meta.textContent = `${it.filename} · p. ${it.pages.join(", ")} · ${it.modality} · ${it.expansion} · ${it.tokens} tok` +
      (it.status === "truncated" ? " · truncated" : "") +
      (it.lines && it.lines.length ? ` · ${it.lines.length} line${it.lines.length > 1 ? "s" : ""}` : "");
    const snip = document.createElement("div");
    snip.className = "snippet";
    snip.textContent = it.text;
    li.append(chip, meta, snip);
    list.appendChild(li);
  }
  const ex = $("excluded");
  ex.innerHTML = "";
  for (const e of pkg.excluded) {
    const li = document.createElement("li");
    li.textContent = `${e.region_id} (p. ${e.pages.join(", ")}, ${e.tokens} tok): ${e.reason}${e.detail ? " — " + e.detail : ""}`;
    ex.appendChild(li);
  }
  $("excluded-title").textContent = `Excluded candidates (${pkg.excluded.length})`;
  $("excluded-box").hidden = pkg.excluded.length === 0;
  $("prompt").textContent = JSON.stringify(pkg.prompt.messages, null, 2);
  $("prompt-box").hidden = false;
}

async function ask(ev) {
  ev.preventDefault();
  const query = $("question").value.trim();
  if (!query) return;
  const body = { query, budget: parseInt($("budget").value, 10) || 2000 };
  if ($("scope").checked && state.doc) body.doc_ids = [state.doc.doc_id];
  $("ask-btn").disabled = true;
  setStatus("Retrieving and packing…");
  try {
    // answer.js: with an LLM configured, stream /v1/answer (it renders the same package here).
    if (!(window.folioAnswer && (await window.folioAnswer(body)))) {
      const pkg = await api("/v1/context", { method: "POST", json: body });
      setStatus("");
      renderPackage(pkg);
    }
  } catch (e) {
    setStatus(e.message, true);
  } finally {
    $("ask-btn").disabled = false;
  }
}

// ------------------------------------------------------------------------------------- upload
async function upload() {
  const file = $("upload").files[0];
  if (!file) return;
  const form = new FormData();
  form.append("file", file);
  const st = $("upload-status");
  st.textContent = `uploading ${file.name}…`;
  try {
    let job = await api("/v1/documents?wait=false", { method: "POST", body: form });
    while (job.status === "queued" || job.status === "running") {
      const p = job.progress;
      st.textContent = `${file.name}: ${p.stage} ${p.total ? `${p.done}/${p.total}` : ""}`;
      await new Promise((r) => setTimeout(r, 400));
      job = await api(`/v1/jobs/${job.job_id}`);
    }
    if (job.status === "failed") throw new Error(job.error.message);
    await loadDocs(job.result.doc_id);
    state.doc = null;
    await openVersion(job.result.doc_id, job.result.version_id, job.result.filename);
    st.textContent = `${file.name}: ${job.result.status} (${job.result.pages} pages)`;
  } catch (e) {
    st.textContent = `upload failed: ${e.message}`;
  } finally {
    $("upload").value = "";
  }
}

// --------------------------------------------------------------------------------------- boot
// /viewer?region=ID[&lines=...]: the region, with the link's lines highlighted (linkLines) inside its faint outline.
async function openLink(regionId, spec) {
  const r = await api(`/v1/regions/${encodeURIComponent(regionId)}`);
  const lines = linkLines(spec, r.locators);
  if (lines.length) await showRegion(r.doc_id, r.version_id, r.filename, r.region_id, linesAsLocators(lines), r.locators);
  else await showRegion(r.doc_id, r.version_id, r.filename, r.region_id, r.locators);
  const shown = lines.length ? ` · ${lines.length} line${lines.length > 1 ? "s" : ""}` : spec ? " · the link's lines were not usable" : "";
  setStatus(`${r.region_id} (${r.kind}, p. ${r.pages.join(", ")})${shown}`);
}

async function boot() {
  $("api-key").value = state.key;
  $("key-form").addEventListener("submit", (e) => e.preventDefault());
  $("api-key").addEventListener("change", async (e) => {
    state.key = e.target.value.trim();
    sessionStorage.setItem("folio.key", state.key);
    localStorage.removeItem("folio.key"); // a key an older viewer kept there
    await loadDocs();
  });
  $("doc-select").addEventListener("change", (e) => e.target.value && openLatest(e.target.value).catch((x) => setStatus(x.message, true)));
  $("upload").addEventListener("change", upload);
  $("ask").addEventListener("submit", ask);
  await loadDocs();
  const params = new URLSearchParams(location.search);
  const regionId = params.get("region");
  const docId = params.get("doc");
  try {
    if (regionId) {
      await openLink(regionId, params.get("lines"));
    } else if (docId) {
      await openLatest(docId);
    } else if (state.docs.length) {
      await openLatest(state.docs[0].doc_id);
    }
  } catch (e) {
    setStatus(e.message, true);
  }
  document.body.dataset.ready = "1";
}

boot();
