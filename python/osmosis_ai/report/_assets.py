"""The page's style and its one script (row table: search, sort, filter, open a row's runs).

The script builds DOM nodes with ``textContent`` only: texts from a results file (model output, tool
results) are never parsed as HTML.
"""

from __future__ import annotations

__all__ = ["SCRIPT", "STYLE"]

STYLE = """
body{font:14px/1.45 system-ui,-apple-system,Segoe UI,sans-serif;margin:0 auto;max-width:1180px;padding:16px;color:#222}
h1{font-size:22px;margin:8px 0}h2{font-size:18px;margin:24px 0 8px;border-bottom:1px solid #ddd}
table{border-collapse:collapse}td,th{padding:3px 8px;border-bottom:1px solid #eee;text-align:left;vertical-align:top}
th{background:#f6f6f6}.kv th{width:170px}.num{text-align:right;font-variant-numeric:tabular-nums}
.plots{display:flex;flex-wrap:wrap;gap:12px}.plot{margin:0;border:1px solid #eee;padding:6px}
.note{color:#555;background:#fffbe6;border:1px solid #f0e0a0;padding:6px 10px;margin:8px 0}
.controls{margin:8px 0;display:flex;gap:8px;align-items:center}
.rows tbody tr.row{cursor:pointer}.rows tbody tr.row:hover{background:#f3f7ff}
.st-passed,.st-improved{color:#2a7d2a}.st-failed,.st-regressed{color:#b03030}.st-errored{color:#a05a00;font-weight:bold}
.detail td{background:#fafafa}.run{border-left:3px solid #ccc;margin:6px 0;padding:4px 8px}
.run.ok{border-color:#54a24b}.run.bad{border-color:#e45756}
.msg{white-space:pre-wrap;margin:2px 0;padding:4px;background:#fff;border:1px solid #eee}
.role{font-weight:bold;color:#4c78a8}.err{white-space:pre-wrap;color:#b03030}
pre{white-space:pre-wrap;margin:2px 0}.good{color:#2a7d2a}.bad{color:#b03030}
"""

SCRIPT = r"""
(function(){
function el(tag, cls, text){var e=document.createElement(tag);if(cls)e.className=cls;
  if(text!==undefined&&text!==null)e.textContent=String(text);return e;}
function fmt(v){return (typeof v==='number')?(Number.isInteger(v)?String(v):v.toFixed(4)):(v===null||v===undefined?'-':String(v));}
function text(v){return (typeof v==='string')?v:JSON.stringify(v,null,2);}
function block(box, label, value, cls){if(value===undefined||value===null)return;
  var d=el('div');d.appendChild(el('b',null,label+': '));d.appendChild(el('pre',cls,text(value)));box.appendChild(d);}
function messages(box, list){if(!Array.isArray(list))return;
  box.appendChild(el('b',null,'messages'));
  list.forEach(function(m){var d=el('div','msg');
    if(m&&typeof m==='object'){d.appendChild(el('span','role',(m.role||'?')+': '));
      d.appendChild(document.createTextNode(text(m.content===undefined?'':m.content)));
      if(m.tool_calls)d.appendChild(el('pre',null,'tool_calls: '+text(m.tool_calls)));}
    else d.textContent=text(m);
    box.appendChild(d);});}
function toolCalls(box, list){if(!Array.isArray(list)||!list.length)return;
  box.appendChild(el('b',null,'tool calls'));
  list.forEach(function(c){var d=el('div','msg');
    var name=(c&&c.name)||(c&&c.function&&c.function.name)||'tool';
    d.appendChild(el('span','role',name));
    var args=c&&(c.arguments!==undefined?c.arguments:(c.function&&c.function.arguments));
    if(args!==undefined)d.appendChild(el('pre',null,'arguments: '+text(args)));
    var res=c&&(c.result!==undefined?c.result:c.output);
    if(res!==undefined)d.appendChild(el('pre',null,'result: '+text(res)));
    if(c&&c.error)d.appendChild(el('pre','err','error: '+text(c.error)));
    box.appendChild(d);});}
function lastAssistant(msgs){if(!Array.isArray(msgs))return null;
  for(var i=msgs.length-1;i>=0;i--){var m=msgs[i];if(m&&m.role==='assistant'&&m.content)return m.content;}return null;}
function runBox(run){
  var ok=run.success!==false&&!run.error&&!run.eval_errors;
  var box=el('div','run '+(ok?'ok':'bad'));
  var head='run '+fmt(run.run_index)+(run.model_tag?' ['+run.model_tag+']':'')+' · '+(run.status||(run.success===false?'failed':'succeeded'));
  if(run.duration_ms!==undefined)head+=' · '+fmt(run.duration_ms)+' ms';
  if(run.tokens!==undefined)head+=' · '+fmt(run.tokens)+' tokens';
  box.appendChild(el('div',null,head));
  block(box,'scores',run.scores&&Object.keys(run.scores).length?run.scores:(run.score!==undefined?run.score:null));
  block(box,'error',run.error,'err');
  block(box,'eval function errors',run.eval_errors,'err');
  block(box,'unscored',run.unscored_reason,'err');
  var msgs=run.messages||run.final_messages;
  messages(box,msgs);
  toolCalls(box,run.tool_calls);
  block(box,'final answer',run.final_answer||lastAssistant(msgs));
  block(box,'judge explanation',run.explanation);
  block(box,'preview',run.preview);
  if(run.clamped)block(box,'judge','score clamped (raw '+fmt(run.raw_score)+')');
  return box;}
function setup(table){
  var data=JSON.parse(document.getElementById(table.dataset.source).textContent);
  var body=table.querySelector('tbody'), cols=JSON.parse(table.dataset.columns);
  var section=table.closest('section');
  var search=section.querySelector('input.search'), filter=section.querySelector('select.filter');
  var sortKey=null, sortDir=1, open={};
  function render(){
    var q=(search.value||'').toLowerCase(), f=filter.value;
    var rows=data.filter(function(r){return (f==='all'||r.status===f)&&
      (!q||JSON.stringify(r).toLowerCase().indexOf(q)>=0);});
    if(sortKey)rows.sort(function(a,b){var x=a[sortKey],y=b[sortKey];
      if(x===y)return 0;if(x===null||x===undefined)return 1;if(y===null||y===undefined)return -1;
      return (x<y?-1:1)*sortDir;});
    body.textContent='';
    rows.forEach(function(r){var tr=el('tr','row');tr.dataset.status=r.status;
      cols.forEach(function(c){var td=el('td',c==='status'?'st-'+r.status:(typeof r[c]==='number'?'num':''),fmt(r[c]));tr.appendChild(td);});
      body.appendChild(tr);
      var dt=el('tr','detail');var td=el('td');td.colSpan=cols.length;dt.appendChild(td);
      dt.hidden=!open[r.row_index];body.appendChild(dt);
      function fill(){if(!td.firstChild){if(!r.runs.length)td.appendChild(el('div',null,'no runs recorded'));
        r.runs.forEach(function(run){td.appendChild(runBox(run));});}}
      if(!dt.hidden)fill();
      tr.addEventListener('click',function(){dt.hidden=!dt.hidden;open[r.row_index]=!dt.hidden;if(!dt.hidden)fill();});});
    section.querySelector('.shown').textContent=rows.length+' of '+data.length+' embedded rows';}
  table.querySelectorAll('th').forEach(function(th,i){th.addEventListener('click',function(){
    var k=cols[i];sortDir=(sortKey===k)?-sortDir:1;sortKey=k;render();});});
  search.addEventListener('input',render);filter.addEventListener('change',render);render();}
document.querySelectorAll('table.rows').forEach(setup);
})();
"""
