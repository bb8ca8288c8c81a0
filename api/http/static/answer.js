// folio viewer, answers: when the server has an LLM (GET /v1/answer/status), "Ask" streams
// POST /v1/answer. The package event fills the evidence panel exactly as /v1/context does
// (renderPackage in viewer.js); text deltas are shown as they arrive, each [S1] as a chip that
// highlights its region; the final event carries the citation check: ids that were never packed
// are marked invented, and the token accounting is shown under the answer. Once the check is in, a
// chip highlights the lines of its item that support its sentence (supporting_lines), else the
// item's lines.
"use strict";

const CITE = /\[\s*([A-Za-z]+\d+(?:\s*[,;]\s*[A-Za-z]+\d+)*)\s*\]/g;

async function loadAnswerStatus() {
  try {
    const s = await api("/v1/answer/status");
    state.llm = !!s.enabled;
    state.llmModel = s.model || null;
  } catch (e) {
    state.llm = false;
  }
  const btn = $("ask-btn");
  btn.textContent = state.llm ? "Ask" : "Get evidence";
  btn.title = state.llm ? `answer with ${state.llmModel}, citations checked` : "no LLM configured: evidence only";
}

// The supporting lines of citation `id` in answer sentence `n` (done.supporting_lines), or null.
function supportOf(n, id) {
  const done = state.answer;
  if (!done || n === null || !done.supporting_lines) return null;
  const s = done.supporting_lines.find((x) => x.sentence_index === n && x.citation_id === id);
  return s && s.lines.length ? s : null;
}

// Where each checked sentence (check.sentences) starts in `text`: found in order by its first words.
// A citation bracket belongs to the last sentence starting before it (sentenceAt), so "... monthly.
// [S2] Next ..." gives [S2] to the sentence it closes, as the check does.
function sentenceStarts(text, check) {
  const starts = [];
  let from = 0;
  for (const s of check ? check.sentences : []) {
    const head = s.text.replace(CITE, "").trim().slice(0, 24);
    const at = head ? text.indexOf(head, from) : -1;
    starts.push(at < 0 ? null : at);
    if (at >= 0) from = at + head.length;
  }
  return starts;
}

function sentenceAt(starts, pos) {
  let n = null;
  starts.forEach((at, k) => { if (at !== null && at <= pos) n = k; });
  return n;
}

function citeChip(id, check, n = null) {
  const it = state.pkg && state.pkg.items.find((x) => x.citation_id === id);
  if (!it || (check && check.invented_ids.includes(id))) {
    const bad = document.createElement("span");
    bad.className = "chip invented";
    bad.dataset.cite = id;
    bad.textContent = id;
    bad.title = `${id} was not in the context package: an invented citation`;
    return bad;
  }
  const chip = document.createElement("button");
  chip.type = "button";
  chip.className = "chip cite";
  chip.dataset.cite = id;
  chip.textContent = id;
  chip.title = `${it.filename} p. ${it.pages.join(", ")} · ${it.region_id}`;
  if (n !== null) chip.dataset.sentence = n;
  const support = check ? supportOf(n, id) : null;
  if (support) {
    chip.classList.add("supported");
    chip.title += ` · ${support.lines.length} supporting line(s), support ${support.support.toFixed(2)}`;
  }
  chip.addEventListener("click", async () => {
    document.querySelectorAll("#items li.active").forEach((x) => x.classList.remove("active"));
    const li = document.querySelector(`#items li[data-citation="${id}"]`);
    if (li) li.classList.add("active");
    try {
      const where = support ? linesAsLocators(support.lines) : highlightOf(it);
      await showRegion(it.doc_id, it.version_id, it.filename, it.region_id, where, support ? it.locators : outlineOf(it));
    } catch (e) {
      setStatus(e.message, true);
    }
  });
  return chip;
}

function renderAnswer(text, check) {
  const out = $("answer");
  out.innerHTML = "";
  let last = 0;
  const starts = sentenceStarts(text, check);
  for (const m of text.matchAll(CITE)) {
    out.append(document.createTextNode(text.slice(last, m.index)));
    const n = check ? sentenceAt(starts, m.index) : null;
    for (const id of m[1].split(/\s*[,;]\s*/)) out.append(citeChip(id.toUpperCase(), check, n));
    last = m.index + m[0].length;
  }
  out.append(document.createTextNode(text.slice(last)));
}

function renderCheck(done) {
  const c = done.check;
  const u = done.usage;
  const parts = [];
  if (done.refused) parts.push("no evidence: the model was not called");
  else parts.push(c.ok ? "citations check out" : "citation check failed");
  if (c.invented_ids.length) parts.push(`invented: ${c.invented_ids.join(", ")}`);
  if (c.uncited_sentences.length) parts.push(`${c.uncited_sentences.length} uncited sentence(s)`);
  const comp = u.completion_tokens === null ? "?" : u.completion_tokens;
  parts.push(`prompt ${u.prompt_tokens} tok (folio) · completion ${comp} tok (endpoint)`);
  const meta = $("answer-meta");
  meta.textContent = parts.join(" · ");
  meta.classList.toggle("error", !done.refused && !c.ok);
  $("answer").dataset.done = "1";
}

function sseEvents(buffer) {
  // Complete "event: x\ndata: {...}" blocks from the buffer, and the rest.
  const blocks = buffer.split("\n\n");
  const rest = blocks.pop();
  const events = [];
  for (const block of blocks) {
    let event = "message";
    const data = [];
    for (const line of block.split("\n")) {
      if (line.startsWith("event: ")) event = line.slice(7);
      else if (line.startsWith("data: ")) data.push(line.slice(6));
    }
    if (data.length) events.push([event, JSON.parse(data.join("\n"))]);
  }
  return [events, rest];
}

async function streamAnswer(body) {
  // Returns false when the server has no LLM (the viewer then shows evidence only).
  if (state.llm === undefined) await loadAnswerStatus();
  if (!state.llm) return false;
  const box = $("answer-box");
  box.hidden = false;
  $("answer").innerHTML = "";
  state.answer = null;
  delete $("answer").dataset.done;
  $("answer-meta").textContent = "";
  setStatus("Retrieving, packing and asking the model…");
  const headers = { "Content-Type": "application/json", Accept: "text/event-stream" };
  if (state.key) headers["X-API-Key"] = state.key;
  const res = await fetch("/v1/answer", { method: "POST", headers, body: JSON.stringify({ ...body, stream: true }) });
  if (!res.ok) {
    const err = res.headers.get("content-type")?.includes("json") ? await res.json() : null;
    throw new ApiError(res.status, err);
  }
  const reader = res.body.getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  let text = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buffer += decoder.decode(value, { stream: true });
    const [events, rest] = sseEvents(buffer);
    buffer = rest;
    for (const [event, data] of events) {
      if (event === "package") {
        renderPackage(data.package);
        if (!data.refused) setStatus(`Answering with ${state.llmModel || "the model"}…`);
      } else if (event === "delta") {
        text += data.text;
        renderAnswer(text, null);
      } else if (event === "done") {
        state.answer = data;
        renderAnswer(data.answer, data.check);
        renderCheck(data);
        if (!data.refused) setStatus("");
      } else if (event === "error") {
        throw new ApiError(data.status || 502, data);
      }
    }
  }
  return true;
}

window.folioAnswer = streamAnswer;
$("api-key").addEventListener("change", () => { state.llm = undefined; loadAnswerStatus(); });
loadAnswerStatus();
