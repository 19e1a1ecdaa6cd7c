/**
 * The operator console's page and script, served as they are by the admin listener
 * (`consoleRoutes.ts`): no build step, no library, nothing fetched from elsewhere, so the page works
 * offline. The script reads `GET /console/events` (server-sent events, `consoleFeed.ts`) and
 * `GET /explain`; it never sends a token (the console is read-only).
 */
export const CONSOLE_HTML = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>gslbd console</title>
<link rel="icon" href="data:,">
<style>
body { font-family: system-ui, sans-serif; margin: 1rem 2rem; color: #111; background: #fff; }
h1 { font-size: 1.4rem; } h2 { font-size: 1.1rem; margin-top: 1.5rem; }
table { border-collapse: collapse; } th, td { border: 1px solid #888; padding: 0.2rem 0.5rem; text-align: left; }
.up { color: #0a5d0a; } .down { color: #a00000; } .unknown { color: #5a4a00; }
#condition[data-status="degraded"] { color: #a00000; font-weight: bold; }
label { margin-right: 0.5rem; } input { margin-left: 0.25rem; }
ol.steps li { margin: 0.2rem 0; } code { background: #f0f0f0; }
</style>
</head>
<body>
<header><h1>gslbd console</h1></header>
<main>
<section aria-labelledby="h-engine">
<h2 id="h-engine">Engine</h2>
<p>Condition: <span id="condition" data-status="">connecting…</span>; snapshot generation <span id="generation">?</span>; updated <span id="updated">never</span>; live updates: <span id="live">connecting</span></p>
<ul id="reasons"></ul>
<p>Last reload: <span id="reload">none since start</span></p>
</section>
<section aria-labelledby="h-dcs">
<h2 id="h-dcs">Data centers and endpoints</h2>
<table id="endpoints">
<caption>Endpoint health, since when, and GSLB answers per data center</caption>
<thead><tr><th scope="col">data center</th><th scope="col">DC status</th><th scope="col">answers, last minute</th><th scope="col">endpoint</th><th scope="col">status</th><th scope="col">override</th><th scope="col">since</th></tr></thead>
<tbody></tbody>
</table>
</section>
<section aria-labelledby="h-explain">
<h2 id="h-explain">Explain</h2>
<form id="explain">
<label for="x-name">name</label><input id="x-name" name="name" required>
<label for="x-type">type</label><input id="x-type" name="type" value="A" size="6">
<label for="x-client">client</label><input id="x-client" name="client" required placeholder="192.0.2.1 or 192.0.2.0/24">
<button type="submit">Explain</button>
</form>
<div id="explanation" aria-live="polite"></div>
</section>
</main>
<script src="/console/app.js"></script>
</body>
</html>
`;

/** The console's script (plain JavaScript, run by the browser). */
export const CONSOLE_SCRIPT = `'use strict';
const $ = (id) => document.getElementById(id);
function text(tag, value, cls) {
  const el = document.createElement(tag);
  el.textContent = value;
  if (cls) el.className = cls;
  return el;
}
function render(s) {
  const cond = $('condition');
  cond.textContent = s.status;
  cond.dataset.status = s.status;
  $('generation').textContent = String(s.generation);
  $('updated').textContent = s.at;
  const reasons = $('reasons');
  reasons.replaceChildren(...s.reasons.map((r) => text('li', r.kind + ' since ' + r.since + ': ' + r.message)));
  const lr = s.lastReload;
  $('reload').textContent = lr ? (lr.error ? 'failed at ' + lr.at + ' (' + lr.reason + '): ' + lr.error : 'generation ' + lr.generation + ' at ' + lr.at + ' (' + lr.reason + ')') : 'none since start';
  const rows = [];
  for (const dc of s.dataCenters) {
    const eps = dc.endpoints.length > 0 ? dc.endpoints : [null];
    eps.forEach((e, i) => {
      const tr = document.createElement('tr');
      tr.dataset.dc = dc.name;
      if (i === 0) {
        tr.append(text('td', dc.name), text('td', dc.status, dc.status), text('td', String(dc.answers.lastMinute)));
        for (const td of tr.children) td.rowSpan = eps.length;
      }
      if (e) {
        tr.dataset.endpoint = e.key;
        tr.append(text('td', e.key), text('td', e.status, e.status), text('td', e.override || '-'), text('td', e.since || '-'));
      } else tr.append(text('td', '-'), text('td', '-'), text('td', '-'), text('td', '-'));
      rows.push(tr);
    });
  }
  $('endpoints').tBodies[0].replaceChildren(...rows);
}
function connect() {
  const events = new EventSource('/console/events');
  events.addEventListener('state', (m) => {
    $('live').textContent = 'on';
    render(JSON.parse(m.data));
  });
  events.onerror = () => {
    $('live').textContent = 'reconnecting';
  };
}
function describe(step) {
  const rest = Object.entries(step).filter(([k]) => k !== 'stage');
  return step.stage + (rest.length ? ': ' + rest.map(([k, v]) => k + ' ' + (typeof v === 'string' ? v : JSON.stringify(v))).join('; ') : '');
}
$('explain').addEventListener('submit', async (ev) => {
  ev.preventDefault();
  const form = new FormData(ev.target);
  const out = $('explanation');
  const res = await fetch('/explain?' + new URLSearchParams({ name: form.get('name'), type: form.get('type') || 'A', client: form.get('client') }));
  const e = await res.json();
  if (!res.ok) {
    out.replaceChildren(text('p', 'Error: ' + e.error, 'down'));
    return;
  }
  const parts = [text('p', 'Client ' + e.client.address + '/' + e.client.sourcePrefix + ' located at ' + e.client.location + '; answer scope /' + e.answer.scope)];
  const answers = document.createElement('ul');
  answers.id = 'answers';
  answers.append(...(e.answer.answers.length ? e.answer.answers : ['(no records)']).map((a) => text('li', a)));
  parts.push(text('h3', 'Answer'), answers);
  for (const sel of e.selections) {
    parts.push(text('h3', 'Steps for ' + sel.record + ' ' + sel.type));
    const ol = document.createElement('ol');
    ol.className = 'steps';
    ol.append(...sel.steps.map((st) => text('li', describe(st))));
    parts.push(ol);
  }
  out.replaceChildren(...parts);
});
connect();
`;
