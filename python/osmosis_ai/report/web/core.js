'use strict';
// The page's one script (report, view and compare pages). Every text from a results file or a dataset
// goes into the page through el()/text nodes (textContent), never as markup. Numbers come from the
// summary object the page carries; this script formats, sorts and filters them, and computes none.

const MAX_SHOWN_CHARS = 20000;

function el(tag, cls, text) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined && text !== null) e.textContent = String(text);
  return e;
}

function add(parent, ...children) {
  for (const c of children) if (c !== null && c !== undefined) parent.appendChild(typeof c === 'string' ? document.createTextNode(c) : c);
  return parent;
}

function fmt(v, digits) {
  if (v === null || v === undefined) return 'n/a';
  if (typeof v !== 'number') return String(v);
  if (!isFinite(v)) return String(v);
  if (Number.isInteger(v)) return v.toLocaleString('en-US');
  return v.toFixed(digits === undefined ? 4 : digits);
}

// A statistic (a mean, a rate, a difference, a bound): its decimals even when it is whole, so a 0 reads
// 0.0000 beside its neighbours; fmt() keeps counts as integers.
function fmtStat(v, digits) {
  if (typeof v !== 'number' || !isFinite(v)) return fmt(v, digits);
  return v.toFixed(digits === undefined ? 4 : digits);
}

function fmtInterval(iv, digits) {
  if (!iv || iv.low === null || iv.low === undefined) return '';
  return '[' + fmtStat(iv.low, digits) + ', ' + fmtStat(iv.high, digits) + ']';
}

function asText(v) {
  if (v === null || v === undefined) return '';
  if (typeof v === 'string') return v;
  try { return JSON.stringify(v, null, 2); } catch (e) { return String(v); }
}

// A long text is shown in part with a button for the rest: a 1 MB answer stays readable and fast.
function longText(tag, cls, value) {
  const full = asText(value);
  const node = el(tag, cls);
  if (full.length <= MAX_SHOWN_CHARS) { node.textContent = full; return node; }
  node.textContent = full.slice(0, MAX_SHOWN_CHARS);
  const more = el('button', 'more', 'show all ' + full.length.toLocaleString('en-US') + ' characters');
  more.type = 'button';
  more.addEventListener('click', (ev) => { ev.stopPropagation(); node.textContent = full; });
  const box = el('div', 'long');
  return add(box, node, more);
}

function readJson(id) {
  const node = document.getElementById(id);
  return node ? JSON.parse(node.textContent) : null;
}

function base64Bytes(text) {
  const raw = atob(text.trim());
  const bytes = new Uint8Array(raw.length);
  for (let i = 0; i < raw.length; i++) bytes[i] = raw.charCodeAt(i);
  return bytes;
}

// Calls onLine(value) for every JSON line of a byte stream, decoded as it arrives.
async function eachLine(stream, onLine) {
  const reader = stream.pipeThrough(new TextDecoderStream()).getReader();
  let rest = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    const parts = (rest + value).split('\n');
    rest = parts.pop();
    for (const line of parts) if (line) onLine(JSON.parse(line));
  }
  if (rest) onLine(JSON.parse(rest));
}

// The lines of a gzip-compressed, base64 data block of the page (the browser decompresses natively).
async function embeddedLines(id, onLine) {
  const node = document.getElementById(id);
  if (!node || !node.textContent.trim()) return;
  const blob = new Blob([base64Bytes(node.textContent)]);
  await eachLine(blob.stream().pipeThrough(new DecompressionStream('gzip')), onLine);
  node.textContent = '';  // the decoded data replaces the text; no need to keep both
}

function runTexts(run) {
  // The texts a search looks in (the same fields as osmosis_ai.report._rows.run_texts).
  const out = [];
  const msgs = Array.isArray(run.final_messages) ? run.final_messages : (Array.isArray(run.messages) ? run.messages : []);
  for (const m of msgs) {
    if (m && typeof m === 'object') { out.push(asText(m.content)); if (m.tool_calls) out.push(asText(m.tool_calls)); }
    else out.push(asText(m));
  }
  for (const k of ['final_answer', 'explanation', 'preview', 'tool_calls']) if (run[k] !== undefined && run[k] !== null) out.push(asText(run[k]));
  if (run.error) out.push(asText(run.error));
  if (run.eval_errors && typeof run.eval_errors === 'object') for (const [k, v] of Object.entries(run.eval_errors)) out.push(k + ': ' + asText(v));
  if (run.unscored_reason) out.push(asText(run.unscored_reason));
  return out;
}

function rowSearchText(row, runs) {
  const parts = [row.prompt, row.truth, row.answer, row.error, row.key];
  for (const v of Object.values(row.fields || {})) parts.push(v);
  for (const run of runs || []) parts.push(...runTexts(run));
  return parts.filter((p) => p !== null && p !== undefined).join('\n').toLowerCase();
}

// Where rows and runs come from: the page itself (osmosis report) or the local server (osmosis view).
function embeddedSource(suffix) {
  const runsBy = { '': new Map(), a: new Map(), b: new Map() };
  let rows = [];
  const texts = new Map();
  const meta = readJson('page-meta' + suffix) || {};
  return {
    kind: 'embedded',
    meta: meta,
    async load() {
      await embeddedLines('rows-data' + suffix, (r) => rows.push(r));
      for (const side of ['', 'a', 'b']) {
        // A line per run: [row index, outcome per score key, the record as the log has it].
        await embeddedLines('runs-data' + suffix + (side ? '-' + side : ''), (line) => {
          const run = line[2];
          run._outcomes = line[1];
          const list = runsBy[side].get(line[0]);
          if (list) list.push(run); else runsBy[side].set(line[0], [run]);
        });
      }
      return rows;
    },
    async runs(row, side) { return runsBy[side || ''].get(row) || []; },
    async search(q) {
      const found = new Set();
      for (const row of rows) {
        let t = texts.get(row.id);
        if (t === undefined) {
          t = row.pair ? rowSearchText(row, (runsBy.a.get(row.a && row.a.i) || []).concat(runsBy.b.get(row.b && row.b.i) || []))
            : rowSearchText(row, runsBy[''].get(row.i));
          texts.set(row.id, t);
        }
        if (t.indexOf(q) >= 0) found.add(row.id);
      }
      return found;
    },
  };
}

function serverSource() {
  const meta = readJson('page-meta') || {};
  return {
    kind: 'server',
    meta: meta,
    async load() {
      const rows = [];
      const reply = await fetch('api/rows');
      if (!reply.ok) throw new Error('api/rows: ' + reply.status);
      await eachLine(reply.body, (r) => rows.push(r));
      return rows;
    },
    async runs(row, side) {
      const reply = await fetch('api/runs?row=' + encodeURIComponent(row) + (side ? '&side=' + side : ''));
      if (!reply.ok) throw new Error('api/runs: ' + reply.status);
      return reply.json();
    },
    async search(q) {
      const reply = await fetch('api/search?q=' + encodeURIComponent(q));
      if (!reply.ok) throw new Error('api/search: ' + reply.status);
      return new Set(await reply.json());
    },
  };
}

function sourceFor(suffix) {
  return document.body.dataset.source === 'server' ? serverSource() : embeddedSource(suffix);
}

function download(name, type, parts) {
  const url = URL.createObjectURL(new Blob(parts, { type: type }));
  const a = el('a');
  a.href = url;
  a.download = name;
  document.body.appendChild(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 60000);
}

function section(parent, title, id) {
  const s = el('section', 'block');
  if (id) s.id = id;
  s.appendChild(el('h2', null, title));
  parent.appendChild(s);
  return s;
}

function kvTable(pairs) {
  const t = el('table', 'kv');
  for (const [k, v] of pairs) {
    if (v === null || v === undefined || v === '') continue;
    const tr = el('tr');
    add(tr, el('th', null, k), el('td', null, Array.isArray(v) ? v.join(', ') : (typeof v === 'object' ? JSON.stringify(v) : (typeof v === 'number' ? fmt(v) : v))));
    t.appendChild(tr);
  }
  return t;
}

function moveFigures(target, prefix) {
  const box = el('div', 'plots');
  document.querySelectorAll('#figures figure').forEach((f) => { if (f.dataset.plot.startsWith(prefix)) box.appendChild(f); });
  if (box.childElementCount) target.appendChild(box);
  return box;
}
