// The numbers of one results file: header, warnings, the score table with intervals, durations, judge.

// The result model's words (from the Rust core, via the page): never spelled again here.
const WORDS = readJson('page-words');
const RUN_WORDS = Object.fromEntries(WORDS.run);
const ROW_WORDS = WORDS.row.slice(2).concat(WORDS.row.slice(0, 2));  // the outcomes first, then errored, incomplete

function lastK(f) { return String(f && f.ks && f.ks.length ? f.ks[f.ks.length - 1] : 1); }

function intervalMethods(summary) {
  const seen = new Set();
  for (const m of summary.models) for (const f of m.functions) for (const iv of Object.values(f.intervals || {})) if (iv.method) seen.add(iv.method);
  return Array.from(seen).join(', ') || 'none';
}

function scoreKey(tag, name) { return tag === 'primary' || !tag ? name : name + ' [' + tag + ']'; }

function headerBlock(summary, meta) {
  const cfg = summary.config || {};
  const dur = summary.durations || {};
  const dataset = meta.dataset || {};
  const models = meta.models || [];
  const first = summary.models[0] || {};
  return kvTable([
    ['file', meta.file], ['kind', summary.source.kind || 'eval'], ['layout', summary.source.layout],
    ['command / agent', cfg.command || cfg.agent || cfg.rubric_id], ['model(s)', models],
    ['dataset', dataset.path], ['dataset fingerprint', dataset.fingerprint], ['dataset rows shown from', meta.dataset_read],
    ['created', meta.created_at], ['osmosis version', meta.osmosis_version],
    ['runs per row (n)', summary.n_runs === null || summary.n_runs === undefined ? 'not declared by the file' : summary.n_runs],
    ['rows', first.total_rows], ['runs', first.total_runs],
    ['pass threshold', summary.pass_threshold],
    ['wall time (s)', dur.total_duration_ms === null || dur.total_duration_ms === undefined ? 'not recorded in this log' : fmt(dur.total_duration_ms / 1000, 1)],
    ['CPU time (s)', dur.cpu_ms === null || dur.cpu_ms === undefined ? 'not recorded in this log' : fmt(dur.cpu_ms / 1000, 1)],
    ['runs\u2019 own durations added up (s; not wall time: runs overlap)', fmt(dur.run_time_ms / 1000, 1)],
    ['tokens', first.total_tokens || null],
    ['latency per run p50 / p95 / p99 (ms)', meta.latency && meta.latency.percentiles
      ? ['p50', 'p95', 'p99'].map((k) => fmt(meta.latency.percentiles[k], 1)).join(' / ') : null],
    ['intervals', (summary.level * 100).toFixed(0) + '% over rows (' + intervalMethods(summary) + ')'],
  ]);
}

function warningsBlock(summary, meta) {
  const list = el('ul', 'warnings');
  for (const w of summary.warnings || []) list.appendChild(el('li', 'note', w.message));
  for (const n of meta.notes || []) list.appendChild(el('li', 'note', n));
  return list.childElementCount ? list : null;
}

function cell(tr, value, cls) { tr.appendChild(el('td', cls || (typeof value === 'number' ? 'num' : ''), value)); }

// A value and its interval in one cell; an interval the data cannot support has no bounds and says
// why (too few rows, no spread) on a line of its own under the value, as an n/a does (a side with
// nothing scored).
function intervalCell(tr, value, iv, sign) {
  const td = el('td', 'num', (sign && value > 0 ? '+' : '') + fmtStat(value));
  const known = value !== null && value !== undefined;
  if (iv && known && iv.low !== null && iv.low !== undefined) td.appendChild(document.createTextNode(' ' + fmtInterval(iv)));
  else if (iv && iv.note) td.appendChild(el('span', 'why', '(' + iv.note + ')'));
  tr.appendChild(td);
}

function scoresTable(summary) {
  const t = el('table', 'scores');
  const first = summary.models.length && summary.models[0].functions.length ? summary.models[0].functions[0] : null;
  const n = lastK(first);
  const head = ['model', 'score', 'runs', 'scored', 'passed', 'did not pass', 'errored (run)', 'errored (function)', 'unscored',
    'mean', 'std', 'min', 'max', 'pass@1', 'pass@n (n = ' + n + ')', 'pass^n'];
  const tr = el('tr');
  for (const h of head) tr.appendChild(el('th', null, h));
  t.appendChild(el('thead')).appendChild(tr);
  const body = t.appendChild(el('tbody'));
  for (const m of summary.models) {
    for (const f of m.functions) {
      const r = el('tr');
      r.dataset.score = scoreKey(m.model_tag, f.name);
      const last = lastK(f);
      const iv = f.intervals || {};
      cell(r, m.model_tag, ''); cell(r, f.name, 'name');
      for (const k of ['finished', 'scored', 'passed', 'not_passed', 'errored_run', 'errored_function', 'unscored']) cell(r, f.runs[k]);
      intervalCell(r, f.mean, iv.mean); cell(r, fmtStat(f.std), 'num'); cell(r, fmtStat(f.min), 'num'); cell(r, fmtStat(f.max), 'num');
      intervalCell(r, f.pass_at_k['1'], iv.pass_at_1);
      intervalCell(r, f.pass_at_k[last], iv['pass_at_' + last]);
      intervalCell(r, f.pass_hat_k[last], iv['pass_hat_' + last]);
      body.appendChild(r);
    }
  }
  return t;
}

function rowTallyTable(summary) {
  const t = el('table', 'tally');
  const tr = el('tr');
  tr.appendChild(el('th', null, 'rows of'));
  for (const [, word] of ROW_WORDS) tr.appendChild(el('th', null, word));
  t.appendChild(tr);
  for (const m of summary.models) for (const f of m.functions) {
    const r = el('tr');
    r.dataset.score = scoreKey(m.model_tag, f.name);
    r.appendChild(el('td', 'name', scoreKey(m.model_tag, f.name)));
    for (const [key] of ROW_WORDS) r.appendChild(el('td', 'num cat-' + key, fmt(f.rows[key])));
    t.appendChild(r);
  }
  return t;
}

function errorMessages(summary) {
  const box = el('div', 'errors');
  for (const m of summary.models) for (const f of m.functions) {
    if (!f.error_messages || !f.error_messages.length) continue;
    const d = el('div', 'err-group');
    d.appendChild(el('b', null, scoreKey(m.model_tag, f.name) + ' raised on ' + fmt(f.runs.errored_function) + ' runs; first messages:'));
    for (const msg of f.error_messages) d.appendChild(longText('pre', 'err', msg));
    box.appendChild(d);
  }
  return box.childElementCount ? box : null;
}

function judgeBlock(parent, judge, index) {
  if (!judge) return;
  const s = section(parent, 'Judge');
  const h = judge.health;
  add(s, el('p', null, 'Judge health: ' + fmt(h.parse_failures) + ' replies not parsed, ' + fmt(h.clamped) + ' scores clamped, '
    + fmt(h.retries) + ' retries, ' + fmt(h.unscored) + ' unscored, ' + fmt(h.errors) + ' errors.'));
  const noise = judge.noise;
  const ns = el('div', 'panel');
  ns.dataset.panel = 'repeat-noise';
  ns.appendChild(el('h3', null, 'Repeat noise (the same record judged more than once)'));
  if (noise && noise.records) {
    ns.appendChild(kvTable([['records judged twice or more', noise.records], ['mean sample variance', fmt(noise.mean_variance)],
      ['mean sample std (K - 1; noise floor)', fmt(noise.mean_std)], ['largest sample std', fmt(noise.max_std)], ['records whose scores differ', noise.disagreeing]]));
    for (const ex of noise.examples || []) ns.appendChild(el('div', 'example', asText(ex.record) + ': scores ' + (ex.scores || []).map((x) => fmt(x)).join(', ')));
  } else ns.appendChild(el('p', 'muted', 'no record was judged more than once (eval-rubric --repeat K measures it)'));
  const gold = judge.gold;
  const gs = el('div', 'panel');
  gs.dataset.panel = 'gold-agreement';
  gs.appendChild(el('h3', null, 'Gold agreement (judge against human labels)'));
  if (gold) {
    gs.appendChild(kvTable([['records compared', gold.count], ['MAE', fmt(gold.mae)], ['bias', fmt(gold.bias)],
      ['Spearman', fmt(gold.spearman)], ['Cohen\u2019s kappa at ' + fmt(gold.threshold), fmt(gold.kappa)],
      ['labels that matched no record', gold.unmatched_labels], ['labelled records never scored', gold.unscored_records]]));
  } else gs.appendChild(el('p', 'muted', 'no gold labels in this file (eval-rubric --gold FILE adds them)'));
  add(s, ns, gs);
  moveFigures(s, 'j' + index + ':');
}

function summaryBlocks(parent, summary, meta, index) {
  const top = section(parent, meta.file || 'results', 'result-' + index);
  top.classList.add('result');
  top.appendChild(headerBlock(summary, meta));
  const warn = warningsBlock(summary, meta);
  if (warn) top.appendChild(warn);
  const scores = section(parent, 'Scores');
  add(scores, add(el('div', 'scroll'), scoresTable(summary)), el('h3', null, 'Rows by outcome'), rowTallyTable(summary), errorMessages(summary));
  const plots = section(parent, 'Plots');
  moveFigures(plots, 'p' + index + ':');
  judgeBlock(parent, meta.judge, index);
}
