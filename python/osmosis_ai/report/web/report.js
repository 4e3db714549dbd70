// The report / view page: one results file's numbers, groups, and every row.

const CAT_ORDER = { errored: 0, incomplete: 1, passed_none: 2, passed_some: 3, passed_every_attempt: 4 };
const CAT_WORD = Object.fromEntries(ROW_WORDS);
const MAX_FIELD_COLUMNS = 4;

function short(text, n) {
  if (text === null || text === undefined) return '';
  const s = String(text);
  return s.length > n ? s.slice(0, n) + '\u2026' : s;
}

function outcomeCell(o) {
  if (!o) return el('span', 'muted', '');
  const span = el('span', 'cat cat-' + o.cat, o.passed + '/' + o.counted + ' ' + CAT_WORD[o.cat]);
  span.title = 'runs: ' + o.runs + ' (P passed, N did not pass, E errored run, X scorer raised, U unscored, S skipped)';
  return span;
}

function scoreFilters(summary, keys) {
  const filters = [];
  for (const m of summary.models) for (const f of m.functions) {
    const key = scoreKey(m.model_tag, f.name);
    if (!keys.includes(key)) continue;
    const options = [['any', 'any']];
    for (const [cat, word] of ROW_WORDS) options.push([cat, word + ' (' + fmt(f.rows[cat]) + ')']);
    options.push(['has_unscored', 'with an unscored run'], ['has_function_error', 'with a scorer error']);
    filters.push({
      id: key, label: key, options: options,
      test(r, v) {
        const o = r.out[key];
        if (!o) return false;
        if (v === 'has_unscored') return o.runs.includes('U');
        if (v === 'has_function_error') return o.runs.includes('X');
        return o.cat === v;
      },
    });
  }
  return filters;
}

function reportColumns(keys, fields) {
  const cols = [
    { id: 'row', label: '#', cls: 'num', value: (r) => r.i },
    { id: 'prompt', label: 'prompt', cls: 'text', value: (r) => r.prompt, render: (r) => short(r.prompt, 140) },
    { id: 'truth', label: 'ground truth', cls: 'text', value: (r) => r.truth, render: (r) => short(r.truth, 60) },
    { id: 'answer', label: 'answer', cls: 'text', value: (r) => r.answer, render: (r) => short(r.answer, 100) },
  ];
  for (const key of keys) {
    cols.push({ id: 'score:' + key, label: key, cls: 'outcome', value: (r) => r.out[key] ? [CAT_ORDER[r.out[key].cat], r.out[key].passed] : null,
      render: (r) => outcomeCell(r.out[key]) });
  }
  for (const f of fields.slice(0, MAX_FIELD_COLUMNS)) cols.push({ id: 'field:' + f, label: f, cls: 'text', value: (r) => (r.fields || {})[f] });
  cols.push({ id: 'tokens', label: 'tokens', cls: 'num', value: (r) => r.tokens, render: (r) => r.tokens === null ? '' : fmt(r.tokens) });
  cols.push({ id: 'slowest', label: 'slowest run (ms)', cls: 'num', value: (r) => r.slowest_ms, render: (r) => r.slowest_ms === null ? '' : fmt(r.slowest_ms, 1) });
  cols.push({ id: 'error', label: 'error', cls: 'text err', value: (r) => r.error, render: (r) => short(r.error, 80) });
  return cols;
}

function csvColumns(keys, fields) {
  const cols = [
    { label: 'row_index', value: (r) => r.i }, { label: 'row_key', value: (r) => r.key },
    { label: 'prompt', value: (r) => r.prompt }, { label: 'ground_truth', value: (r) => r.truth }, { label: 'answer', value: (r) => r.answer },
  ];
  for (const f of fields) cols.push({ label: f, value: (r) => (r.fields || {})[f] });
  for (const key of keys) {
    cols.push({ label: key + ' row outcome', value: (r) => r.out[key] ? CAT_WORD[r.out[key].cat] : null });
    cols.push({ label: key + ' passed', value: (r) => r.out[key] ? r.out[key].passed : null });
    cols.push({ label: key + ' runs that count', value: (r) => r.out[key] ? r.out[key].counted : null });
    cols.push({ label: key + ' run outcomes', value: (r) => r.out[key] ? r.out[key].runs : null });
  }
  cols.push({ label: 'tokens', value: (r) => r.tokens }, { label: 'slowest_run_ms', value: (r) => r.slowest_ms }, { label: 'error', value: (r) => r.error });
  return cols;
}

function groupsBlock(parent, meta, summary, index, table) {
  const groups = meta.groups || {};
  const fields = Object.keys(groups);
  const s = section(parent, 'Groups');
  if (!fields.length) { s.appendChild(el('p', 'muted', 'no dataset field with 2 to 30 values to group by' + (meta.dataset_read ? '' : ' (the dataset file was not read)'))); return; }
  const pick = el('select', 'group-by');
  pick.setAttribute('aria-label', 'group by');
  for (const f of fields) { const o = el('option', null, f); o.value = f; pick.appendChild(o); }
  add(s, add(el('label', null, 'group by '), pick));
  const tableBox = el('div', 'group-table');
  s.appendChild(tableBox);
  const plots = moveFigures(s, 'g' + index + ':');
  const primary = summary.models[0] ? summary.models[0].functions.map((f) => f.name) : [];
  const n = lastK(summary.models[0] ? summary.models[0].functions[0] : null);
  function show() {
    const field = pick.value;
    plots.querySelectorAll('figure').forEach((f) => { f.hidden = f.dataset.plot !== 'g' + index + ':' + field; });
    tableBox.textContent = '';
    const t = el('table', 'groups');
    const head = el('tr');
    head.appendChild(el('th', null, field));
    head.appendChild(el('th', null, 'rows'));
    for (const name of primary) for (const h of ['mean', 'pass@1', 'pass@' + n]) head.appendChild(el('th', null, name + ' ' + h));
    t.appendChild(head);
    for (const g of groups[field]) {
      const tr = el('tr', 'group');
      tr.dataset.group = g.value;
      tr.title = 'show only these rows in the table below';
      const first = g.stats[primary[0]] || {};
      add(tr, el('td', 'name', g.value), el('td', 'num', fmt(first.rows)));
      for (const name of primary) {
        const st = g.stats[name] || {};
        const pk = st.pass_at_k || {};
        intervalCell(tr, st.mean, st.mean_interval);
        for (const k of ['1', n]) intervalCell(tr, pk[k] ? pk[k].value : null, pk[k] ? pk[k].interval : null);
      }
      tr.addEventListener('click', () => table.setGroup(field, g.value));
      t.appendChild(tr);
    }
    tableBox.appendChild(t);
  }
  pick.addEventListener('change', show);
  show();
}

async function reportPage(app, index) {
  const suffix = document.body.dataset.source === 'server' ? '' : '-' + index;
  const summary = readJson('page-summary' + suffix);
  const source = sourceFor(suffix);
  const meta = source.meta;
  summaryBlocks(app, summary, meta, index);
  const groupsAt = el('div');
  app.appendChild(groupsAt);
  const rowsSection = section(app, 'Rows of ' + (meta.file || 'the file'));
  if (meta.left_out_note) rowsSection.appendChild(el('p', 'note', meta.left_out_note));
  const status = el('p', 'muted loading', 'loading rows\u2026');
  rowsSection.appendChild(status);
  const rows = await source.load();
  status.remove();
  const keys = meta.score_keys || [];
  const fields = meta.fields || [];
  const table = rowTable(rowsSection, {
    name: 'report' + index, rows: rows, source: source, columns: reportColumns(keys, fields),
    filters: scoreFilters(summary, keys), csv: csvColumns(keys, fields),
    card: (target, row) => fillCard(target, row, source),
    async exportRow(r) {
      return { row_index: r.i, row_key: r.key, prompt: r.prompt, ground_truth: r.truth, fields: r.fields, outcomes: r.out, runs: await source.runs(r.i) };
    },
  });
  groupsBlock(groupsAt, meta, summary, index, table);
}
