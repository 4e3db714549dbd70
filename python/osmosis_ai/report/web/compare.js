// The comparison page: A and B side by side for every matched row, flips, differences, per-group deltas.

const FLIP_WORD = { a_only: 'A passed, B did not', b_only: 'B passed, A did not', both: 'both passed', neither: 'neither passed' };
const DIFF_CELLS = 4000000;

function tokens(text) { return String(text).match(/\s+|[\p{L}\p{N}_]+|[^\s\p{L}\p{N}_]/gu) || []; }

// Word-level differences of two texts as [kind, text] pieces: kind '=' both, '-' only A, '+' only B.
function diffPieces(a, b) {
  const x = tokens(a), y = tokens(b);
  let start = 0;
  while (start < x.length && start < y.length && x[start] === y[start]) start++;
  let ex = x.length, ey = y.length;
  while (ex > start && ey > start && x[ex - 1] === y[ey - 1]) { ex--; ey--; }
  const mx = x.slice(start, ex), my = y.slice(start, ey);
  const pieces = [['=', x.slice(0, start).join('')]];
  if ((mx.length + 1) * (my.length + 1) > DIFF_CELLS) {
    pieces.push(['-', mx.join('')], ['+', my.join('')]);
  } else {
    // Longest common subsequence table over the differing middle only.
    const w = my.length + 1;
    const L = new Uint32Array((mx.length + 1) * w);
    for (let i = mx.length - 1; i >= 0; i--) for (let j = my.length - 1; j >= 0; j--) {
      L[i * w + j] = mx[i] === my[j] ? L[(i + 1) * w + j + 1] + 1 : Math.max(L[(i + 1) * w + j], L[i * w + j + 1]);
    }
    let i = 0, j = 0;
    while (i < mx.length || j < my.length) {
      if (i < mx.length && j < my.length && mx[i] === my[j]) { pieces.push(['=', mx[i]]); i++; j++; }
      else if (j < my.length && (i >= mx.length || L[i * w + j + 1] >= L[(i + 1) * w + j])) { pieces.push(['+', my[j]]); j++; }
      else { pieces.push(['-', mx[i]]); i++; }
    }
  }
  pieces.push(['=', x.slice(ex).join('')]);
  return pieces.filter((p) => p[1]);
}

function diffNode(pieces, side) {
  const pre = el('pre', 'answer diff');
  for (const [kind, text] of pieces) {
    if (kind === '=') pre.appendChild(document.createTextNode(text));
    else if ((kind === '-' && side === 'a') || (kind === '+' && side === 'b')) pre.appendChild(el('mark', kind === '-' ? 'only-a' : 'only-b', text));
  }
  return pre;
}

async function fillPair(target, row, source) {
  target.textContent = 'loading\u2026';
  const [ra, rb] = await Promise.all([row.a ? source.runs(row.a.i, 'a') : [], row.b ? source.runs(row.b.i, 'b') : []]);
  target.textContent = '';
  target.appendChild(rowHead({ i: row.a ? row.a.i : row.b.i, key: row.key, prompt: row.prompt, truth: row.truth, fields: row.fields }));
  const grid = el('div', 'side-by-side');
  add(grid, el('div', 'side-title', 'A'), el('div', 'side-title', 'B'));
  const byIndex = (runs) => new Map(runs.map((r) => [r.run_index, r]));
  const ma = byIndex(ra), mb = byIndex(rb);
  const indices = Array.from(new Set([...ma.keys(), ...mb.keys()])).sort((p, q) => p - q);
  for (const k of indices) {
    const a = ma.get(k), b = mb.get(k);
    const ta = a ? finalAnswer(a) : null, tb = b ? finalAnswer(b) : null;
    const pieces = ta !== null && tb !== null && ta !== tb ? diffPieces(ta, tb) : null;
    for (const [run, side] of [[a, 'a'], [b, 'b']]) {
      const col = el('div', 'side side-' + side);
      if (run) col.appendChild(runCard(run, pieces ? diffNode(pieces, side) : null));
      else col.appendChild(el('p', 'muted', 'no run ' + k + ' in ' + side.toUpperCase()));
      grid.appendChild(col);
    }
  }
  target.appendChild(grid);
}

function differenceTable(c) {
  const t = el('table', 'differences');
  const head = el('tr');
  for (const h of ['statistic', 'A', 'B', 'B - A', 'interval', 'verdict']) head.appendChild(el('th', null, h));
  t.appendChild(head);
  for (const d of c.differences) {
    const tr = el('tr');
    tr.dataset.statistic = d.statistic;
    add(tr, el('td', 'name', d.label), el('td', 'num', fmtStat(d.a)), el('td', 'num', fmtStat(d.b)),
      el('td', 'num', (d.estimate > 0 ? '+' : '') + fmtStat(d.estimate)),
      el('td', d.low === null || d.low === undefined ? 'muted' : 'num', d.low === null || d.low === undefined ? (d.note || 'no interval') : fmtInterval(d)),
      el('td', d.verdict === 'B better' ? 'good' : d.verdict === 'B worse' ? 'bad' : '', d.verdict));
    t.appendChild(tr);
  }
  return t;
}

function groupDeltas(parent, c) {
  const groups = c.groups || {};
  const fields = Object.keys(groups);
  const s = section(parent, 'Per-group differences (B - A)');
  if (!fields.length) { s.appendChild(el('p', 'muted', 'no dataset field with 2 to 30 values to group by')); return; }
  const pick = el('select', 'group-by');
  for (const f of fields) { const o = el('option', null, f); o.value = f; pick.appendChild(o); }
  add(s, add(el('label', null, 'group by '), pick));
  const box = el('div');
  s.appendChild(box);
  const plots = moveFigures(s, 'd:');
  function show() {
    plots.querySelectorAll('figure').forEach((f) => { f.hidden = f.dataset.plot !== 'd:' + pick.value; });
    box.textContent = '';
    const t = el('table', 'groups');
    const head = el('tr');
    for (const h of [pick.value, 'rows', 'B - A mean', 'B - A pass@1']) head.appendChild(el('th', null, h));
    t.appendChild(head);
    for (const g of groups[pick.value]) {
      const tr = el('tr', 'group');
      tr.dataset.group = g.value;
      add(tr, el('td', 'name', g.value), el('td', 'num', fmt(g.rows)));
      for (const k of ['mean', 'pass_at_1']) {
        const d = g.differences[k];
        intervalCell(tr, d ? d.estimate : null, d, true);
      }
      t.appendChild(tr);
    }
    box.appendChild(t);
  }
  pick.addEventListener('change', show);
  show();
}

function pairColumns() {
  return [
    { id: 'row', label: '#', cls: 'num', value: (r) => (r.a ? r.a.i : r.b.i) },
    { id: 'prompt', label: 'prompt', cls: 'text', value: (r) => r.prompt, render: (r) => short(r.prompt, 120) },
    { id: 'a', label: 'A', cls: 'outcome', value: (r) => r.a ? [CAT_ORDER[r.a.out.cat], r.a.out.passed] : null, render: (r) => outcomeCell(r.a && r.a.out) },
    { id: 'b', label: 'B', cls: 'outcome', value: (r) => r.b ? [CAT_ORDER[r.b.out.cat], r.b.out.passed] : null, render: (r) => outcomeCell(r.b && r.b.out) },
    { id: 'flip', label: 'first attempt', cls: 'text', value: (r) => r.flip, render: (r) => el('span', 'flip flip-' + r.flip, FLIP_WORD[r.flip] || 'n/a') },
    { id: 'answer_a', label: 'answer A', cls: 'text', value: (r) => r.a && r.a.answer, render: (r) => short(r.a && r.a.answer, 80) },
    { id: 'answer_b', label: 'answer B', cls: 'text', value: (r) => r.b && r.b.answer, render: (r) => short(r.b && r.b.answer, 80) },
  ];
}

async function comparePage(app) {
  const c = readJson('page-summary');
  const source = sourceFor('');
  const top = section(app, 'Comparison: ' + c.metric, 'comparison');
  add(top, kvTable([['A', c.a], ['B', c.b], ['score', c.metric],
    ['rows matched', fmt(c.rows_matched) + ' (A has ' + fmt(c.rows_a) + ', B has ' + fmt(c.rows_b) + '; matched by ' + c.matched_by + ')'],
    ['pass threshold', c.pass_threshold], ['intervals', c.interval_note], ['McNemar exact p (first attempts)', fmt(c.mcnemar_p)],
    ['verdict', c.verdict ? c.verdict.words + ' on ' + c.verdict.statistic + ': ' + c.verdict.reason : null]]));
  const warn = el('ul', 'warnings');
  for (const w of c.warnings || []) warn.appendChild(el('li', 'note', w));
  if (warn.childElementCount) top.appendChild(warn);
  const diff = section(app, 'Differences (B - A)');
  diff.appendChild(differenceTable(c));
  const f = c.flips;
  diff.appendChild(kvTable([['A passed, B did not', f.a_only], ['B passed, A did not', f.b_only], ['both passed', f.both], ['neither passed', f.neither]]));
  moveFigures(section(app, 'Plots'), 'c:');
  groupDeltas(app, c);
  const rowsSection = section(app, 'Every matched row, A beside B');
  if (source.meta.left_out_note) rowsSection.appendChild(el('p', 'note', source.meta.left_out_note));
  const status = el('p', 'muted loading', 'loading rows\u2026');
  rowsSection.appendChild(status);
  const rows = await source.load();
  status.remove();
  const cats = [['any', 'any']].concat(ROW_WORDS);
  rowTable(rowsSection, {
    name: 'compare', rows: rows, source: source, columns: pairColumns(),
    filters: [
      { id: 'show', label: 'show', options: [['any', 'every row'], ['flips', 'only flips (' + fmt(f.a_only + f.b_only) + ')'], ['differences', 'only differences']],
        test: (r, v) => v === 'flips' ? (r.flip === 'a_only' || r.flip === 'b_only') : r.differs },
      { id: 'cat_a', label: 'A', options: cats, test: (r, v) => !!r.a && r.a.out.cat === v },
      { id: 'cat_b', label: 'B', options: cats, test: (r, v) => !!r.b && r.b.out.cat === v },
    ],
    csv: [{ label: 'row_key', value: (r) => r.key }, { label: 'row_index_a', value: (r) => r.a && r.a.i }, { label: 'row_index_b', value: (r) => r.b && r.b.i },
      { label: 'prompt', value: (r) => r.prompt }, { label: 'ground_truth', value: (r) => r.truth },
      { label: 'A row outcome', value: (r) => r.a && CAT_WORD[r.a.out.cat] }, { label: 'B row outcome', value: (r) => r.b && CAT_WORD[r.b.out.cat] },
      { label: 'first attempt', value: (r) => FLIP_WORD[r.flip] || null }, { label: 'answer A', value: (r) => r.a && r.a.answer }, { label: 'answer B', value: (r) => r.b && r.b.answer }],
    card: (target, row) => fillPair(target, row, source),
    async exportRow(r) {
      return { row_key: r.key, prompt: r.prompt, ground_truth: r.truth, fields: r.fields, flip: r.flip,
        a: r.a ? { row_index: r.a.i, outcome: r.a.out, runs: await source.runs(r.a.i, 'a') } : null,
        b: r.b ? { row_index: r.b.i, outcome: r.b.out, runs: await source.runs(r.b.i, 'b') } : null };
    },
  });
}
