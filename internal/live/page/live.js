
'use strict';
(function () {
  // F names the audit line's fields (the server's auditlog constants).
  const F = JSON.parse(document.getElementById('fields').textContent);
  const $ = (id) => document.getElementById(id);
  const MAX_ROWS = 1000, MAX_QUEUE = 5000, MAX_SEEN = 200000, MINUTE = 60e3, HOUR = 3600e3, TOP = 8;
  const tbody = $('tbody');
  const form = { token: $('f-token'), host: $('f-host'), decision: $('f-decision'), reason: $('f-reason') };
  let es = null, paused = false, queue = [], queueSkipped = 0;
  let seen = [], since = 0, info = {};
  const reasons = new Set();

  function el(tag, cls, text) {
    const e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined && text !== null) e.textContent = String(text);
    return e;
  }

  function setStatus(cls, text) {
    const s = $('status');
    s.className = cls;
    s.textContent = text;
  }

  function params() {
    const q = new URLSearchParams();
    for (const [k, input] of Object.entries(form)) {
      const v = input.value.trim();
      if (v) q.set(k, v);
    }
    return q;
  }

  function readLocation() {
    const q = new URLSearchParams(location.search);
    for (const [k, input] of Object.entries(form)) input.value = q.get(k) || '';
  }

  function connect() {
    if (es) es.close();
    tbody.replaceChildren();
    seen = []; since = 0; queue = []; queueSkipped = 0;
    $('empty').hidden = false;
    drawCounts();
    const q = params().toString();
    history.replaceState(null, '', q ? '?' + q : location.pathname);
    setStatus('connecting', 'connecting…');
    es = new EventSource('/live/events' + (q ? '?' + q : ''));
    es.addEventListener('hello', (ev) => {
      info = JSON.parse(ev.data);
      $('replica').textContent = 'replica ' + (info.replica || '?') + ' · audit log ' +
        (info.audit_log || 'stdout') + (info.chain ? '' : ' (not chained: lines have no hash)');
    });
    es.addEventListener('decision', (ev) => receive({ d: JSON.parse(ev.data) }));
    es.addEventListener('skipped', (ev) => receive({ skipped: JSON.parse(ev.data).skipped }));
    es.onopen = () => { if (!paused) setStatus('live', 'live'); };
    es.onerror = () => {
      if (es.readyState === EventSource.CLOSED) {
        setStatus('closed', 'stream refused or ended (too many subscribers?): trying again in 10 s');
        setTimeout(connect, 10e3);
      } else {
        setStatus('down', 'disconnected: reconnecting…');
      }
    };
  }

  let drawSoon = 0;
  function receive(ev) {
    const l = ev.d && ev.d.line;
    if (l && l[F.decision] !== undefined) count(Date.parse(l[F.time]), l[F.token], hostOf(l[F.url] || ''), l[F.reason]);
    if (!drawSoon) drawSoon = setTimeout(() => { drawSoon = 0; drawCounts(); }, 300);
    if (!paused) {
      render(ev);
      return;
    }
    if (queue.length < MAX_QUEUE) queue.push(ev);
    else queueSkipped++;
    setStatus('paused', 'paused: ' + (queue.length + queueSkipped) + ' new');
  }

  function render(ev) {
    $('empty').hidden = true;
    if (ev.skipped !== undefined) notice(ev.skipped + ' decisions skipped: this page fell behind the ring of recent decisions');
    else decision(ev.d);
    while (tbody.rows.length > MAX_ROWS) tbody.lastElementChild.remove();
  }

  function notice(text) {
    const tr = el('tr', 'notice');
    const td = el('td', '', text);
    td.colSpan = 9;
    tr.append(td);
    tbody.prepend(tr);
  }

  function hostOf(u) {
    if (u.includes('://')) {
      try { return new URL(u).hostname; } catch (e) { return u.split('/')[2] || u; }
    }
    const i = u.lastIndexOf(':');
    return (i > 0 ? u.slice(0, i) : u).toLowerCase();
  }

  function cell(label, cls, text) {
    const td = el('td', cls, text);
    td.dataset.label = label;
    return td;
  }

  // detail is what the 403 body says of a refusal: the robots.txt URL,
  // the rule and its line; else the error or cause the line records.
  function detail(l) {
    if (l[F.decision] !== F.decisionDeny) return '';
    if (l[F.reason] === F.reasonRule && l[F.robotsURL]) {
      return l[F.robotsURL] + ' line ' + l[F.ruleLine] + ': ' + l[F.rule];
    }
    return l[F.usageRule] || l[F.unreachableCause] || l[F.error] || '';
  }

  function decision(d) {
    const l = d.line;
    if (l[F.decision] === undefined) {
      notice(l[F.lostLines] !== undefined ? l[F.lostLines] + ' audit lines were not written (' + (l.message || '') + ')' : (l.message || JSON.stringify(l)));
      return;
    }
    const t = Date.parse(l[F.time]);
    const token = l[F.token] || '', reason = l[F.reason] || '';
    if (reason && !reasons.has(reason)) {
      reasons.add(reason);
      $('reasons').append(el('option', '', reason));
    }
    let kind = l[F.decision];
    let label = kind;
    if (kind === F.decisionDeny && l[F.enforced] === false) {
      kind = 'report';
      label = 'deny (report mode: forwarded)';
    }
    const tr = el('tr', 'fresh ' + kind);
    const when = isNaN(t) ? l[F.time] : new Date(t).toLocaleTimeString([], { hour12: false });
    tr.append(cell('Time', 'time', when), cell('Client', 'client', l[F.client]));
    const tok = cell('Product token', 'token', token || '—');
    if (l[F.tokenSource]) tok.append(el('span', 'src', l[F.tokenSource] + (l[F.user] ? ' ' + l[F.user] : '')));
    const method = cell('Method', 'method', l[F.method]);
    if (l[F.protocol]) method.append(el('span', 'src', l[F.protocol]));
    tr.append(tok, method);
    const url = cell('URL', 'url', l[F.url]);
    const why = detail(l);
    if (why) url.append(el('span', 'detail', why));
    tr.append(url);
    const dec = cell('Decision', 'decision');
    dec.append(el('span', 'badge', label));
    tr.append(dec, cell('Reason', 'reason', reason), cell('Status', 'status', l[F.status]));
    const audit = cell('Audit line', 'audit');
    if (d.sha256) {
      const a = el('a', 'hash', d.sha256.slice(0, 12) + '…');
      a.href = '/live/line/' + d.sha256;
      a.target = '_blank';
      a.rel = 'noopener noreferrer';
      a.title = 'SHA-256 ' + d.sha256 + '\nin the log: grep -B1 \'"prev":"' + d.sha256 + '"\' ' + (info.audit_log || 'AUDIT_LOG');
      audit.append(a);
    } else {
      audit.append(el('span', 'src', 'no hash (audit.chain off)'));
    }
    const show = el('button', 'show', 'show');
    show.type = 'button';
    show.addEventListener('click', () => toggleLine(tr, show, l, d.sha256));
    audit.append(show);
    tr.append(audit);
    tbody.prepend(tr);
  }

  function toggleLine(tr, button, l, sum) {
    const next = tr.nextElementSibling;
    if (next && next.classList.contains('lineview')) {
      next.remove();
      button.textContent = 'show';
      return;
    }
    const view = el('tr', 'lineview');
    const td = el('td');
    td.colSpan = 9;
    td.append(el('pre', '', (sum ? 'sha256 ' + sum + '\n' : '') + JSON.stringify(l, null, 1)));
    view.append(td);
    tr.after(view);
    button.textContent = 'hide';
  }

  function count(t, token, host, reason) {
    if (isNaN(t)) return;
    if (!since || t < since) since = t;
    seen.push({ t: t, token: token || '(none)', host: host || '(none)', reason: reason || '(none)' });
    if (seen.length > MAX_SEEN) seen.splice(0, seen.length - MAX_SEEN);
  }

  function tally(key, now) {
    const m = new Map();
    for (const s of seen) {
      const k = s[key];
      let c = m.get(k);
      if (!c) m.set(k, (c = { min: 0, hour: 0 }));
      c.hour++;
      if (now - s.t <= MINUTE) c.min++;
    }
    return [...m.entries()].sort((a, b) => b[1].hour - a[1].hour || b[1].min - a[1].min || (a[0] < b[0] ? -1 : 1)).slice(0, TOP);
  }

  function drawCounts() {
    const now = Date.now();
    let i = 0;
    while (i < seen.length && now - seen[i].t > HOUR) i++;
    if (i > 0) seen.splice(0, i);
    for (const key of ['token', 'host', 'reason']) {
      const body = $('c-' + key).tBodies[0];
      const rows = tally(key, now).map(([k, c]) => {
        const tr = el('tr');
        tr.append(el('td', '', k), el('td', '', c.min), el('td', '', c.hour));
        return tr;
      });
      body.replaceChildren(...rows);
    }
    const filtered = params().toString() ? ' that pass the filters' : '';
    $('counts-note').textContent = since && now - since < HOUR
      ? 'Counts of the decisions this page received' + filtered + ', since ' + new Date(since).toLocaleTimeString([], { hour12: false }) + ' (the oldest the replica kept or sent since).'
      : 'Counts of the decisions this page received' + filtered + '.';
  }

  $('pause').addEventListener('click', () => {
    paused = !paused;
    const b = $('pause');
    b.textContent = paused ? 'Resume' : 'Pause';
    b.setAttribute('aria-pressed', String(paused));
    if (paused) {
      setStatus('paused', 'paused');
      return;
    }
    const q = queue;
    queue = [];
    if (queueSkipped > 0) q.unshift({ skipped: queueSkipped });
    queueSkipped = 0;
    for (const ev of q) render(ev);
    setStatus(es && es.readyState === EventSource.OPEN ? 'live' : 'down', es && es.readyState === EventSource.OPEN ? 'live' : 'reconnecting…');
  });
  $('filters').addEventListener('submit', (ev) => {
    ev.preventDefault();
    connect();
  });
  $('clear').addEventListener('click', () => {
    for (const input of Object.values(form)) input.value = '';
    connect();
  });
  readLocation();
  connect();
  drawCounts();
  setInterval(drawCounts, 2000);
})();
