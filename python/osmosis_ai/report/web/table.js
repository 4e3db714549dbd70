// The row table: search, filters, sort by any column, pages, a card per row, CSV / JSONL export.

const PAGE_SIZE = 50;

function csvCell(value) {
  let s = value === null || value === undefined ? '' : (typeof value === 'string' ? value : (typeof value === 'number' ? String(value) : JSON.stringify(value)));
  // A spreadsheet runs a cell that starts with = + - @ as a formula: such text is quoted as text.
  if (/^[=+\-@\t\r]/.test(s)) s = "'" + s;
  return '"' + s.replace(/"/g, '""') + '"';
}

function compareValues(x, y) {
  const nx = x === null || x === undefined || x === '', ny = y === null || y === undefined || y === '';
  if (nx || ny) return nx === ny ? 0 : (nx ? 1 : -1);  // unknown values last, whichever the direction
  if (typeof x === 'number' && typeof y === 'number') return x - y;
  if (Array.isArray(x) && Array.isArray(y)) {
    for (let i = 0; i < Math.min(x.length, y.length); i++) { const c = compareValues(x[i], y[i]); if (c) return c; }
    return x.length - y.length;
  }
  return String(x).localeCompare(String(y));
}

function rowTable(parent, opts) {
  const rows = opts.rows;
  const state = { q: '', found: null, filters: {}, group: null, sort: null, dir: 1, page: 0, open: new Set(), token: 0 };
  const box = el('div', 'rowtable');
  box.dataset.table = opts.name;
  const controls = el('div', 'controls');
  const search = el('input', 'search');
  search.type = 'search';
  search.placeholder = 'search prompt, ground truth, output, error';
  search.setAttribute('aria-label', 'search rows');
  controls.appendChild(search);
  for (const f of opts.filters) {
    const label = el('label', 'filter');
    label.appendChild(el('span', null, f.label + ' '));
    const select = el('select');
    select.dataset.filter = f.id;
    for (const [value, text] of f.options) { const o = el('option', null, text); o.value = value; select.appendChild(o); }
    select.addEventListener('change', () => { state.filters[f.id] = select.value; state.page = 0; render(); });
    label.appendChild(select);
    controls.appendChild(label);
  }
  const groupNote = el('span', 'group-note');
  const shown = el('span', 'shown');
  const csv = el('button', 'export-csv', 'export CSV'); csv.type = 'button';
  const jsonl = el('button', 'export-jsonl', 'export JSONL'); jsonl.type = 'button';
  add(controls, groupNote, csv, jsonl, shown);
  const table = el('table', 'rows');
  const head = el('tr');
  opts.columns.forEach((c) => {
    const th = el('th', 'sortable', c.label);
    th.dataset.col = c.id;
    th.title = 'sort by ' + c.label;
    th.addEventListener('click', () => { state.dir = state.sort === c.id ? -state.dir : 1; state.sort = c.id; state.page = 0; render(); });
    head.appendChild(th);
  });
  table.appendChild(el('thead')).appendChild(head);
  const body = table.appendChild(el('tbody'));
  const pager = el('div', 'pager');
  add(box, controls, table, pager);
  parent.appendChild(box);

  function matching() {
    const list = rows.filter((r) => {
      if (state.found && !state.found.has(r.id)) return false;
      if (state.group && String((r.fields || {})[state.group.field]) !== state.group.value) return false;
      for (const f of opts.filters) { const v = state.filters[f.id]; if (v && v !== 'any' && !f.test(r, v)) return false; }
      return true;
    });
    if (state.sort) {
      const col = opts.columns.find((c) => c.id === state.sort);
      list.sort((a, b) => {
        const x = col.value(a), y = col.value(b);
        const nx = x === null || x === undefined || x === '', ny = y === null || y === undefined || y === '';
        if (nx || ny) return nx === ny ? a.id - b.id : (nx ? 1 : -1);
        return compareValues(x, y) * state.dir || a.id - b.id;
      });
    }
    return list;
  }

  function render() {
    const list = matching();
    const pages = Math.max(1, Math.ceil(list.length / PAGE_SIZE));
    state.page = Math.min(state.page, pages - 1);
    const start = state.page * PAGE_SIZE;
    body.textContent = '';
    for (const r of list.slice(start, start + PAGE_SIZE)) {
      const tr = el('tr', 'row');
      tr.dataset.row = String(r.id);
      for (const c of opts.columns) {
        const td = el('td', c.cls || '');
        const shownValue = c.render ? c.render(r) : c.value(r);
        if (shownValue instanceof Node) td.appendChild(shownValue); else td.textContent = shownValue === null || shownValue === undefined ? '' : String(shownValue);
        tr.appendChild(td);
      }
      const detail = el('tr', 'detail');
      const td = el('td');
      td.colSpan = opts.columns.length;
      detail.appendChild(td);
      detail.hidden = !state.open.has(r.id);
      const fill = () => Promise.resolve(opts.card(td, r)).then(() => td.dispatchEvent(new Event('osmosis:card', { bubbles: true })),
        (err) => { td.textContent = 'could not load the runs: ' + String(err && err.message ? err.message : err); });
      if (!detail.hidden) fill();
      tr.addEventListener('click', () => {
        detail.hidden = !detail.hidden;
        if (detail.hidden) state.open.delete(r.id); else { state.open.add(r.id); fill(); }
      });
      add(body, tr, detail);
    }
    shown.textContent = (list.length ? (start + 1) + '\u2013' + Math.min(start + PAGE_SIZE, list.length) + ' of ' : '')
      + list.length.toLocaleString('en-US') + ' matching rows (' + rows.length.toLocaleString('en-US') + ' in the file)';
    box.dataset.matching = String(list.length);
    pager.textContent = '';
    const prev = el('button', 'prev', '\u2190 previous'); prev.type = 'button'; prev.disabled = state.page === 0;
    const next = el('button', 'next', 'next \u2192'); next.type = 'button'; next.disabled = state.page >= pages - 1;
    prev.addEventListener('click', () => { state.page--; render(); });
    next.addEventListener('click', () => { state.page++; render(); });
    add(pager, prev, el('span', 'page', ' page ' + (state.page + 1) + ' of ' + pages + ' '), next);
    groupNote.textContent = state.group ? 'only ' + state.group.field + ' = ' + state.group.value + ' ' : '';
    if (state.group) {
      const clear = el('button', 'clear-group', 'show every group'); clear.type = 'button';
      clear.addEventListener('click', () => { state.group = null; render(); });
      groupNote.appendChild(clear);
    }
    box.dispatchEvent(new Event('osmosis:rendered'));  // tests (and anything else) wait on this
  }

  let timer = null;
  search.addEventListener('input', () => {
    clearTimeout(timer);
    timer = setTimeout(async () => {
      const q = search.value.trim().toLowerCase();
      const token = ++state.token;
      box.dataset.searching = '1';
      const found = q ? await opts.source.search(q) : null;
      if (token !== state.token) return;  // a newer query is under way
      state.found = found; state.q = q; state.page = 0;
      delete box.dataset.searching;
      render();
    }, 120);
  });
  csv.addEventListener('click', () => {
    const list = matching();
    const lines = [opts.csv.map((c) => csvCell(c.label)).join(',')];
    for (const r of list) lines.push(opts.csv.map((c) => csvCell(c.value(r))).join(','));
    download(opts.name + '-rows.csv', 'text/csv;charset=utf-8', ['\ufeff' + lines.join('\r\n') + '\r\n']);
  });
  jsonl.addEventListener('click', async () => {
    const parts = [];
    for (const r of matching()) parts.push(JSON.stringify(await opts.exportRow(r)) + '\n');
    download(opts.name + '-rows.jsonl', 'application/x-ndjson', parts);
  });
  render();
  return { render: render, setGroup(field, value) { state.group = { field: field, value: value }; state.page = 0; render(); box.scrollIntoView(); } };
}
