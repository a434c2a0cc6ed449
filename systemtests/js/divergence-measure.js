// Measured in the page for systemtests/test_dashboard_replay.py, on a kept replay's "different"
// divergence card: its rows (field, differs, the rules' and the host's value), the values of up to
// `short` characters broken over lines, entries whose kind or label is clipped or not whole in
// their title, and where Teardown, Delete and the session id sit.
(short) => {
  const card = document.querySelector('#timeline .entry.diverged .dv[data-problem=different]');
  const lines = el => { const r = document.createRange(); r.selectNodeContents(el);
    return new Set([...r.getClientRects()].filter(x => x.width > 0).map(x => Math.round(x.top))).size; };
  const rows = card ? [...card.querySelectorAll('.dvt tbody tr')].map(tr => ({field: tr.dataset.field, differs: tr.classList.contains('differs'),
    rules: tr.querySelector('.dve').textContent, host: tr.querySelector('.dva').textContent})) : null;
  const broken = card ? [...card.querySelectorAll('.dvt td')].filter(td => td.textContent.length <= short && lines(td) > 1)
    .map(td => td.textContent) : null;
  const clipped = [], untitled = [];
  for (const e of document.querySelectorAll('#timeline .entry')) {
    const box = e.getBoundingClientRect();
    for (const part of e.querySelectorAll(':scope > .kind, :scope > .txt, :scope > .rule')) {
      const r = part.getBoundingClientRect();
      if (part.scrollWidth > part.clientWidth + 1 || r.right > box.right + 0.5) clipped.push(e.dataset.seq + ': ' + part.textContent);
    }
    const txt = e.querySelector(':scope > .txt'), rid = e.querySelector(':scope > .rid');
    if (!e.title.includes(txt.textContent) || (rid && !e.title.includes(rid.textContent))) untitled.push(e.dataset.seq);
  }
  const top = id => Math.round(document.getElementById(id).getBoundingClientRect().top);
  const middle = id => { const r = document.getElementById(id).getBoundingClientRect(); return Math.round(r.top + r.height / 2); };
  return {rows, broken, clipped, untitled, teardown: top('btn-teardown'), del: top('btn-delete'),
          buttonMiddle: middle('btn-teardown'), idMiddle: middle('session-id'),
          watchdog: (n => n && n.textContent)(document.querySelector('#lane-timers .entry[data-kind=watchdog] .txt'))};
}
