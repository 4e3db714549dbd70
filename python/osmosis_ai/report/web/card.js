// The run card: everything about one row's runs, each as text (never markup).

function messagesOf(run) {
  if (Array.isArray(run.final_messages)) return run.final_messages;
  if (Array.isArray(run.messages)) return run.messages;
  return [];
}

function contentText(content) {
  if (Array.isArray(content)) return content.map((p) => (p && typeof p === 'object' && typeof p.text === 'string') ? p.text : asText(p)).join('\n');
  return asText(content);
}

function finalAnswer(run) {
  if (run.final_answer !== undefined && run.final_answer !== null) return asText(run.final_answer);
  const msgs = messagesOf(run);
  for (let i = msgs.length - 1; i >= 0; i--) {
    const m = msgs[i];
    if (m && typeof m === 'object' && m.role === 'assistant' && m.content) return contentText(m.content);
  }
  return null;
}

function labelled(box, label, node) {
  if (!node) return;
  const d = el('div', 'field');
  add(d, el('div', 'label', label), node);
  box.appendChild(d);
}

function scoreBadges(run) {
  const box = el('div', 'badges');
  const outcomes = run._outcomes || {};
  const scores = run.scores && typeof run.scores === 'object' ? run.scores : {};
  for (const [key, outcome] of Object.entries(outcomes)) {
    const name = key.replace(/ \[[^\]]*\]$/, '');
    const value = scores[name];
    const b = el('span', 'badge out-' + outcome);
    b.dataset.outcome = outcome;
    b.textContent = key + ': ' + (typeof value === 'number' ? fmt(value) : 'no score') + ' \u00b7 ' + (RUN_WORDS[outcome] || outcome);
    box.appendChild(b);
  }
  return box;
}

function errorsBox(run) {
  const box = el('div', 'errors');
  if (run.error) box.appendChild(longText('pre', 'err', 'run error: ' + asText(run.error)));
  if (run.eval_errors && typeof run.eval_errors === 'object') {
    for (const [name, message] of Object.entries(run.eval_errors)) box.appendChild(longText('pre', 'err', name + ' raised: ' + asText(message)));
  }
  if (run.unscored_reason) box.appendChild(longText('pre', 'err', 'unscored: ' + asText(run.unscored_reason)));
  return box.childElementCount ? box : null;
}

// The recorded tool calls (name, duration) in call order, matched to the transcript's tool messages.
function toolTimings(run) {
  const left = (Array.isArray(run.tool_calls) ? run.tool_calls : []).filter((c) => c && typeof c === 'object');
  return (name) => {
    let i = left.findIndex((c) => name && (c.name === name || (c.function && c.function.name === name)));
    if (i < 0) i = 0;
    return left.length ? left.splice(i, 1)[0] : null;
  };
}

function transcript(run) {
  const msgs = messagesOf(run);
  if (!msgs.length) return null;
  const box = el('ol', 'transcript');
  const timing = toolTimings(run);
  for (const m of msgs) {
    const li = el('li', 'msg');
    if (m && typeof m === 'object') {
      li.dataset.role = String(m.role || '?');
      li.appendChild(el('span', 'role', String(m.role || '?')));
      if (m.name) li.appendChild(el('span', 'tool-name', String(m.name)));
      if (m.role === 'tool') {
        const t = timing(m.name);
        const when = [];
        if (t && t.started_ms !== undefined && t.started_ms !== null) when.push('at ' + fmt(t.started_ms, 1) + ' ms');
        if (t && t.duration_ms !== undefined && t.duration_ms !== null) when.push('took ' + fmt(t.duration_ms, 1) + ' ms');
        if (when.length) li.appendChild(el('span', 'took', when.join(' \u00b7 ')));
      }
      if (m.content !== undefined && m.content !== null) li.appendChild(longText('div', 'content', contentText(m.content)));
      if (Array.isArray(m.tool_calls)) {
        for (const c of m.tool_calls) {
          const fn = (c && c.function) || c || {};
          li.appendChild(longText('pre', 'call', '\u2192 ' + asText(fn.name || 'tool') + '(' + asText(fn.arguments === undefined ? '' : fn.arguments) + ')'));
        }
      }
    } else li.appendChild(longText('div', 'content', asText(m)));
    box.appendChild(li);
  }
  return box;
}

function toolCallTable(run) {
  const calls = Array.isArray(run.tool_calls) ? run.tool_calls : [];
  if (!calls.length) return null;
  const t = el('table', 'tools');
  const head = el('tr');
  for (const h of ['#', 'at (ms)', 'took (ms)', 'tool', 'arguments', 'result / error']) head.appendChild(el('th', null, h));
  t.appendChild(head);
  calls.forEach((c, i) => {
    const call = c && typeof c === 'object' ? c : { name: asText(c) };
    const fn = call.function || {};
    const tr = el('tr', call.error ? 'bad' : '');
    // When the call began, in ms from the run's start (RolloutContext.record_tool_call's started_ms).
    const at = call.started_ms;
    add(tr, el('td', 'num', i + 1), el('td', 'num', at === undefined || at === null ? '' : fmt(at, 1)),
      el('td', 'num', call.duration_ms === undefined ? '' : fmt(call.duration_ms, 1)),
      el('td', 'name', asText(call.name || fn.name || 'tool')));
    const args = el('td'); args.appendChild(longText('pre', null, asText(call.arguments !== undefined ? call.arguments : fn.arguments)));
    const res = el('td'); res.appendChild(longText('pre', call.error ? 'err' : null, call.error ? 'error: ' + asText(call.error) : asText(call.result !== undefined ? call.result : call.output)));
    add(tr, args, res);
    t.appendChild(tr);
  });
  return t;
}

function usageLine(run) {
  const parts = [];
  if (run.duration_ms !== undefined && run.duration_ms !== null) parts.push('latency ' + fmt(run.duration_ms, 1) + ' ms');
  const u = run.usage && typeof run.usage === 'object' ? run.usage : {};
  const total = run.tokens !== undefined ? run.tokens : u.total_tokens;
  if (total !== undefined && total !== null) parts.push(fmt(total) + ' tokens');
  const p = run.prompt_tokens !== undefined ? run.prompt_tokens : u.prompt_tokens;
  const c = run.completion_tokens !== undefined ? run.completion_tokens : u.completion_tokens;
  if (p !== undefined || c !== undefined) parts.push('(' + fmt(p) + ' prompt, ' + fmt(c) + ' completion)');
  if (run.num_llm_calls !== undefined) parts.push(fmt(run.num_llm_calls) + ' model calls');
  if (run.finish_reason) parts.push('finish: ' + asText(run.finish_reason));
  if (run.clamped) parts.push('judge score clamped (raw ' + fmt(run.raw_score) + ')');
  return el('div', 'usage', parts.join(' \u00b7 '));
}

function runCard(run, answerNode) {
  const outcomes = Object.values(run._outcomes || {});
  const worst = outcomes.includes('errored') ? 'errored' : outcomes.includes('unscored') ? 'unscored'
    : outcomes.includes('not_passed') ? 'not_passed' : outcomes.length ? 'passed' : 'none';
  const box = el('div', 'run out-' + worst);
  box.dataset.run = String(run.run_index);
  const head = el('div', 'run-head', 'run ' + fmt(run.run_index) + (run.model_tag ? ' [' + run.model_tag + ']' : ''));
  add(box, head, scoreBadges(run), usageLine(run));
  const errs = errorsBox(run);
  if (errs) labelled(box, 'errors', errs);
  const answer = finalAnswer(run);
  labelled(box, 'final answer', answerNode || (answer === null ? el('div', 'muted', 'no answer') : longText('pre', 'answer', answer)));
  if (run.explanation !== undefined && run.explanation !== null) labelled(box, 'judge explanation', longText('pre', 'explanation', run.explanation));
  labelled(box, 'tool calls (timed)', toolCallTable(run));
  labelled(box, 'messages', transcript(run));
  return box;
}

function rowHead(row) {
  const box = el('div', 'row-head');
  labelled(box, 'prompt', row.prompt === null || row.prompt === undefined ? null : longText('pre', 'prompt', row.prompt));
  labelled(box, 'ground truth', row.truth === null || row.truth === undefined ? el('div', 'muted', 'not known (dataset file not read)') : longText('pre', 'truth', row.truth));
  const fields = Object.entries(row.fields || {});
  if (fields.length) labelled(box, 'dataset fields', kvTable(fields));
  if (row.key) box.appendChild(el('div', 'muted', 'row ' + row.i + ' \u00b7 key ' + row.key));
  return box;
}

async function fillCard(target, row, source) {
  target.textContent = 'loading\u2026';
  const runs = await source.runs(row.i);
  target.textContent = '';
  target.appendChild(rowHead(row));
  if (row.left_out) target.appendChild(el('p', 'note', row.left_out + ' runs of this row are not in this page (its data limit); osmosis view shows them.'));
  if (!runs.length && !row.left_out) target.appendChild(el('p', 'muted', 'no runs recorded'));
  runs.sort((a, b) => (a.model_tag || '').localeCompare(b.model_tag || '') || (a.run_index || 0) - (b.run_index || 0));
  for (const run of runs) target.appendChild(runCard(run));
}
