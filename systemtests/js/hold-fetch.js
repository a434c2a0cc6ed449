// Holds, in the page, the first fetch whose URL (without its query) is `path` and whose query has
// `has`, until `window.__held()` is called; its answer is then read, and once the page's own code
// after that read has run (a task queued behind it), `window.__heldSeen` is what `probe` returned.
// For systemtests/test_dashboard_actions.py: an answer that arrives after a newer one.
((path, has, probe) => { const real = window.__realFetch = window.__realFetch || window.fetch;
  window.__held = null; window.__heldSeen = undefined;
  window.fetch = (url, init) => {
    const [p, query] = String(url).split('?');
    if (window.__held === null && p === path && (query || '').includes(has) && (!init || init.method === 'GET'))
      return new Promise(go => { window.__held = async () => {
        const r = await real(url, init), t = await r.text();
        const late = new Response(t, {status: r.status, headers: r.headers}), text = late.text.bind(late);
        late.text = async () => { const v = await text(); setTimeout(() => { window.__heldSeen = probe(); }); return v; };
        go(late); }; });
    return real(url, init); }; })
