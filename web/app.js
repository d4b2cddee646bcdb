// The brain page: plain JavaScript over the JSON API at /api, no framework, nothing fetched from elsewhere.
// Every piece of stored data reaches the page through textContent or an attribute, never through HTML:
// memory text can hold markup and scripts.
'use strict';

(() => {
  const SEARCH_STEP = 20;
  const SIGNALS = ['vector', 'lexical', 'recency'];
  const SVG_NS = 'http://www.w3.org/2000/svg';

  const state = {
    session: null,
    csrf: null,
    namespace: '',
    namespaces: [],
    tab: 'memories',
    mode: 'browse', // or 'search'
    query: '',
    searchLimit: SEARCH_STEP,
    cursor: null,
    listSeq: 0,
    detail: null, // { memory, history }
    opener: null,
    drafts: new Map(), // memory id → replacement text not yet saved
    erase: null, // { by, target } waiting for confirmation
    certificateUrl: null,
  };

  const $ = (id) => {
    const el = document.getElementById(id);
    if (!el) throw new Error(`the page has no #${id}`);
    return el;
  };

  /** Builds an element; strings among the children become text nodes (never markup). */
  function h(tag, props, ...children) {
    const el = document.createElement(tag);
    setProps(el, props);
    append(el, children);
    return el;
  }

  /** The same for SVG elements. */
  function svg(tag, attrs, ...children) {
    const el = document.createElementNS(SVG_NS, tag);
    for (const [k, v] of Object.entries(attrs ?? {})) if (v !== undefined && v !== null) el.setAttribute(k, String(v));
    append(el, children);
    return el;
  }

  function setProps(el, props) {
    for (const [k, v] of Object.entries(props ?? {})) {
      if (v === undefined || v === null || v === false) continue;
      if (k === 'class') el.className = v;
      else if (k.startsWith('on') && typeof v === 'function') el.addEventListener(k.slice(2), v);
      else if (k.startsWith('data-') || k.startsWith('aria-') || k === 'role' || k === 'for' || k === 'scope') el.setAttribute(k, String(v));
      else el[k] = v;
    }
  }

  function append(el, children) {
    for (const c of children.flat(Infinity)) {
      if (c === undefined || c === null || c === false) continue;
      el.append(typeof c === 'string' || typeof c === 'number' ? document.createTextNode(String(c)) : c);
    }
  }

  /** Replaces an element's children (strings as text; null, undefined and false left out). */
  function fill(el, ...children) {
    el.replaceChildren();
    append(el, children);
  }

  const show = (el, visible) => {
    el.hidden = !visible;
  };

  // --- formatting ------------------------------------------------------------------------------------------

  const pad = (n) => String(n).padStart(2, '0');
  function fmtDate(iso) {
    if (!iso) return '—';
    const d = new Date(iso);
    if (Number.isNaN(d.getTime())) return String(iso);
    return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${pad(d.getHours())}:${pad(d.getMinutes())}`;
  }
  const timeEl = (iso, testid) => h('time', { dateTime: iso ?? '', title: iso ?? '', 'data-testid': testid }, fmtDate(iso));
  const fmtNum = (n, digits = 4) => (typeof n === 'number' && Number.isFinite(n) ? n.toFixed(digits) : '—');
  const truncate = (s, n) => (s.length > n ? `${s.slice(0, n - 1)}…` : s);

  /** The lifecycle state of a memory, as words: the server's (one definition, in core); "superseded" reads "replaced". */
  function states(m) {
    return (m.states || []).map((s) => (s === 'superseded' ? 'replaced' : s));
  }
  const isActive = (m) => m.active === true;

  function badge(text, cls, testid) {
    return h('span', { class: `badge ${cls ?? ''}`, 'data-testid': testid }, text);
  }

  // --- messages --------------------------------------------------------------------------------------------

  class ApiError extends Error {
    constructor(status, code, message, hint, field) {
      super(message);
      this.status = status;
      this.code = code;
      this.hint = hint;
      this.field = field;
    }
  }

  function clearAlert() {
    fill($('alert'), );
  }

  function showError(err) {
    const e = err instanceof ApiError ? err : new ApiError(0, 'PAGE', err && err.message ? err.message : String(err));
    // Checks made in the page carry no status code: only the field they are about.
    const head = e.status ? `${e.status} ${e.code}` : e.code === 'PAGE' ? '' : e.code;
    fill($('alert'), 
      h('p', { class: 'alert-title' }, e.status === 403 ? 'Refused: ' : e.status === 401 ? 'Not logged in: ' : e.code === 'PAGE' ? 'Check: ' : 'Error: ', h('span', { 'data-testid': 'alert-message' }, e.message)),
      head || e.field ? h('p', { class: 'alert-meta' }, [head, e.field ? `field ${e.field}` : ''].filter(Boolean).join(' · ')) : null,
      e.hint ? h('p', { class: 'alert-hint' }, e.hint) : null,
      h('button', { type: 'button', class: 'secondary small', onclick: clearAlert, 'data-testid': 'alert-dismiss' }, 'Dismiss'),
    );
    // The session ended (expired, or its token revoked): log in again; what was typed stays for then.
    if (e.status === 401 && state.session && state.session.auth) endSession(true);
  }

  let statusTimer = 0;
  function say(text) {
    clearTimeout(statusTimer);
    $('status').textContent = text;
    statusTimer = setTimeout(() => ($('status').textContent = ''), 12_000);
  }

  // --- the API ---------------------------------------------------------------------------------------------

  async function api(method, path, options = {}) {
    const url = new URL(`/api${path}`, location.origin);
    for (const [k, v] of Object.entries(options.query ?? {})) if (v !== undefined && v !== null && v !== '') url.searchParams.set(k, String(v));
    const headers = { Accept: 'application/json' };
    if (options.body !== undefined) headers['Content-Type'] = 'application/json';
    if (method !== 'GET' && state.csrf) headers['X-CSRF-Token'] = state.csrf;
    let res;
    try {
      res = await fetch(url, { method, headers, credentials: 'same-origin', body: options.body === undefined ? undefined : JSON.stringify(options.body) });
    } catch (err) {
      throw new ApiError(0, 'NETWORK', `the server cannot be reached (${err && err.message ? err.message : err})`);
    }
    const text = await res.text();
    let data = null;
    try {
      data = text ? JSON.parse(text) : null;
    } catch {
      data = null;
    }
    if (!res.ok) {
      const e = data && data.error;
      if (e && typeof e === 'object') throw new ApiError(res.status, e.code ?? `HTTP ${res.status}`, e.message ?? res.statusText, e.hint, e.field);
      throw new ApiError(res.status, `HTTP ${res.status}`, typeof e === 'string' ? e : text.slice(0, 300) || res.statusText);
    }
    return data;
  }

  /** Runs an action: clears the old alert, disables `button` meanwhile, shows any error. Returns its value or undefined. */
  async function act(button, fn) {
    clearAlert();
    if (button) button.disabled = true;
    document.body.classList.add('busy');
    try {
      return await fn();
    } catch (err) {
      showError(err);
      return undefined;
    } finally {
      document.body.classList.remove('busy');
      if (button) button.disabled = false;
    }
  }

  const ns = () => state.namespace;
  const memoryPath = (id, action) => `/memories/${encodeURIComponent(id)}${action ? `/${action}` : ''}`;

  // --- session ---------------------------------------------------------------------------------------------

  function showLogin() {
    show($('app-view'), false);
    show($('session-bar'), false);
    show($('login-view'), true);
    $('login-token').focus();
  }

  /** Forgets everything the session showed (after logout or an expired session; the latter keeps unsaved drafts). */
  function endSession(keepDrafts = false) {
    saveDraft();
    state.session = null;
    state.csrf = null;
    state.detail = null;
    if (!keepDrafts) {
      state.drafts.clear();
      $('search-input').value = '';
      state.mode = 'browse';
      state.query = '';
    }
    for (const id of ['results', 'routes-list', 'quarantine-rows', 'tokens-rows', 'detail-text', 'detail-fields', 'detail-provenance', 'detail-history', 'erase-summary', 'erase-checks'])
      fill($(id));
    for (const id of ['chart-created', 'chart-histogram', 'chart-top', 'chart-never']) fill($(id));
    show($('detail'), false);
    show($('erase-result'), false);
    show($('token-secret'), false);
    $('token-secret-value').value = '';
    $('workspace').classList.remove('with-detail');
    showLogin();
  }

  async function startSession(session) {
    state.session = session;
    state.csrf = session.csrf ?? null;
    const t = session.token;
    const admin = t.scope === 'admin';
    const everywhere = t.namespaces.includes('*');
    fill($('whoami'), 
      h('span', { class: 'who-id', 'data-testid': 'whoami-id' }, t.name ? `${t.name} (${t.id})` : t.id),
      ' · ',
      h('span', { class: `badge scope-${t.scope}`, 'data-testid': 'whoami-scope' }, t.scope),
      ' · ',
      h('span', { 'data-testid': 'whoami-namespaces', title: 'namespaces this token reaches' }, t.namespaces.join(', ')),
    );
    show($('logout'), session.auth);
    for (const tab of document.querySelectorAll('[role="tab"]')) {
      const need = tab.getAttribute('data-admin');
      // The Erase tab only where the server can sign a certificate (`erase` in the session).
      const eraseOff = tab.getAttribute('data-tab') === 'erase' && session.erase === false;
      show(tab, !eraseOff && (!need || (admin && (need !== 'all' || (everywhere && session.auth)))));
    }
    show($('detail-readonly'), t.scope === 'read');
    // The first tab before anything is awaited: a tab someone opens while the namespaces load is kept.
    selectTab('memories', false);
    show($('login-view'), false);
    show($('app-view'), true);
    show($('session-bar'), true);
    await loadNamespaces(sessionStorage.getItem('cairn.namespace'));
    await loadList();
  }

  async function boot() {
    wire();
    try {
      await startSession(await api('GET', '/session'));
    } catch (err) {
      if (err instanceof ApiError && err.status === 401) showLogin();
      else showError(err);
    }
  }

  // --- namespaces ------------------------------------------------------------------------------------------

  async function loadNamespaces(prefer) {
    const r = await api('GET', '/namespaces');
    const list = r.namespaces.slice();
    if (!list.some((n) => n.namespace === r.defaultNamespace)) list.push({ namespace: r.defaultNamespace, live: 0, forgotten: 0, superseded: 0, expired: 0 });
    list.sort((a, b) => a.namespace.localeCompare(b.namespace));
    state.namespaces = list;
    const wanted = [prefer, state.namespace, r.defaultNamespace].find((n) => n && list.some((x) => x.namespace === n));
    state.namespace = wanted ?? r.defaultNamespace;
    const select = $('namespace');
    select.replaceChildren(
      ...list.map((n) =>
        h('option', { value: n.namespace, selected: n.namespace === state.namespace }, `${n.namespace} (${n.live} live${n.forgotten + n.superseded ? `, ${n.forgotten + n.superseded} inactive` : ''})`),
      ),
    );
    select.value = state.namespace;
  }

  async function changeNamespace(name) {
    state.namespace = name;
    sessionStorage.setItem('cairn.namespace', name);
    closeDetail(false);
    await act(null, () => refreshTab());
    document.dispatchEvent(new CustomEvent('cairn:namespace', { detail: { namespace: name } }));
  }

  // --- tabs ------------------------------------------------------------------------------------------------

  function selectTab(name, load = true) {
    if (name !== state.tab) {
      closeDetail(false);
      // What an action said belongs to the tab it was done on.
      clearTimeout(statusTimer);
      $('status').textContent = '';
    }
    state.tab = name;
    for (const tab of document.querySelectorAll('[role="tab"]')) {
      const on = tab.getAttribute('data-tab') === name;
      tab.setAttribute('aria-selected', String(on));
      tab.tabIndex = on ? 0 : -1;
      show($(tab.getAttribute('aria-controls')), on);
    }
    if (load) void act(null, () => refreshTab());
    document.dispatchEvent(new CustomEvent('cairn:tab', { detail: { tab: name } }));
  }

  async function refreshTab() {
    switch (state.tab) {
      case 'memories':
        return loadList();
      case 'routes':
        return loadRoutes();
      case 'charts':
        return loadCharts();
      case 'quarantine':
        return loadQuarantine();
      case 'tokens':
        return loadTokens();
      case 'erase':
        if (!$('erase-target').value) $('erase-target').value = state.namespace;
        return undefined;
      default:
        return undefined;
    }
  }

  function onTabKey(event) {
    const tabs = [...document.querySelectorAll('[role="tab"]')].filter((t) => !t.hidden);
    const i = tabs.indexOf(event.currentTarget);
    let next = -1;
    if (event.key === 'ArrowRight') next = (i + 1) % tabs.length;
    else if (event.key === 'ArrowLeft') next = (i - 1 + tabs.length) % tabs.length;
    else if (event.key === 'Home') next = 0;
    else if (event.key === 'End') next = tabs.length - 1;
    if (next < 0) return;
    event.preventDefault();
    tabs[next].focus();
    selectTab(tabs[next].getAttribute('data-tab'));
  }

  // --- memories: search and browse ----------------------------------------------------------------------------

  function filters() {
    const to = $('filter-to').value;
    let toExclusive;
    if (to) {
      const d = new Date(`${to}T00:00:00Z`);
      d.setUTCDate(d.getUTCDate() + 1);
      toExclusive = d.toISOString().slice(0, 10);
    }
    return {
      kind: $('filter-kind').value,
      tag: $('filter-tag').value.trim(),
      from: $('filter-from').value,
      to: toExclusive,
      inactive: $('filter-inactive').checked ? '1' : undefined,
      limit: Number($('filter-limit').value) || 50,
      source: $('filter-source').value.trim(),
      agent: $('filter-agent').value.trim(),
      session: $('filter-session').value.trim(),
    };
  }

  async function loadList(append = false) {
    const seq = ++state.listSeq;
    const list = $('results');
    list.setAttribute('aria-busy', 'true');
    try {
      await fetchList(seq, append);
    } finally {
      if (seq === state.listSeq) list.setAttribute('aria-busy', 'false');
    }
  }

  /** One page of the list; a response that a newer request has overtaken is dropped. `data-loaded` counts renders. */
  async function fetchList(seq, append) {
    const f = filters();
    if (state.mode === 'search') {
      const r = await api('GET', '/search', { query: { q: state.query, namespace: ns(), limit: state.searchLimit, kind: f.kind, tag: f.tag, count: '0' } });
      if (seq !== state.listSeq) return;
      $('list-title').textContent = `Results for “${state.query}”`;
      renderCards(r.results, false);
      $('list-count').textContent = `${r.results.length} result${r.results.length === 1 ? '' : 's'} in ${r.namespace}`;
      $('load-more').textContent = 'More results';
      show($('load-more'), r.results.length >= state.searchLimit && state.searchLimit < 100);
      return;
    }
    const r = await api('GET', '/memories', {
      query: { namespace: ns(), kind: f.kind, tag: f.tag, from: f.from, to: f.to, inactive: f.inactive, limit: f.limit, before: append ? state.cursor : undefined, source: f.source, agent: f.agent, session: f.session },
    });
    if (seq !== state.listSeq) return;
    $('list-title').textContent = f.inactive ? 'Newest memories, inactive included' : 'Newest memories';
    renderCards(r.memories, append);
    const shown = $('results').children.length;
    $('list-count').textContent = `${shown} shown from ${r.namespace}`;
    state.cursor = r.memories.length ? r.memories[r.memories.length - 1].id : state.cursor;
    $('load-more').textContent = 'Load more';
    show($('load-more'), r.memories.length === f.limit);
  }

  function renderCards(memories, append) {
    const list = $('results');
    const best = bestPerSignal(memories);
    const cards = memories.map((m) => card(m, best));
    if (append) list.append(...cards);
    else list.replaceChildren(...cards);
    show($('list-empty'), list.children.length === 0);
    list.setAttribute('data-loaded', String(state.listSeq));
    markSelected();
    document.dispatchEvent(new CustomEvent('cairn:cards', { detail: { memories } }));
  }

  /** Each signal's largest contribution among the shown results: a bar is drawn against that best candidate. */
  function bestPerSignal(memories) {
    const best = {};
    for (const name of SIGNALS) best[name] = Math.max(0, ...memories.map((m) => (m.scoreDetails && m.scoreDetails.signals[name] ? m.scoreDetails.signals[name].contribution || 0 : 0)));
    return best;
  }

  function card(m, best) {
    const open = h('button', { type: 'button', class: 'card-text', 'data-testid': 'memory-open', 'aria-label': `Open: ${truncate(m.text, 80)}` }, m.text);
    open.addEventListener('click', () => void act(null, () => openDetail(m.id, open)));
    return h(
      'li',
      { class: `card${isActive(m) ? '' : ' inactive'}`, 'data-testid': 'memory-card', 'data-id': m.id },
      h(
        'div',
        { class: 'card-meta' },
        badge(m.kind, `kind kind-${m.kind}`, 'memory-kind'),
        states(m).map((s) => badge(s, `state state-${s}`, 'memory-state')),
        timeEl(m.createdAt, 'memory-date'),
        h('span', { class: 'muted', title: 'importance (1–10)' }, `importance ${m.importance}`),
        m.tags.length ? h('span', { class: 'tags' }, m.tags.map((t) => h('span', { class: 'tag' }, `#${t}`))) : null,
      ),
      open,
      m.scoreDetails ? scoreView(m.score, m.scoreDetails, best) : null,
    );
  }

  /**
   * Each recall signal's rank and contribution, with a bar scaled against the best result of that signal.
   * Score fusion: a 0–100 relevance, the signals' points (one decimal) adding up to the total shown.
   */
  function scoreView(score, details, best) {
    const points = details.method === 'score';
    const shown = (d) => (points ? Math.round((d.contribution || 0) * 10) / 10 : d.contribution || 0);
    const parts = SIGNALS.map((name) => details.signals[name] ?? { rank: null, contribution: 0, raw: null });
    // A feedback demotion (wrong/stale marks) is its own negative line, so the lines still add up to the total.
    const demotion = details.feedback;
    // Points from matching memories of the same session (session context) are their own line too.
    const lift = details.context;
    const total = points ? parts.reduce((sum, d) => sum + shown(d), 0) + (lift ? shown(lift) : 0) + (demotion ? shown(demotion) : 0) : score;
    return h(
      'div',
      { class: 'score', 'data-testid': 'score-details' },
      points
        ? h('span', { class: 'score-total', title: 'relevance 0–100: the sum of the signals’ points' }, 'relevance ', h('strong', { 'data-testid': 'score-total' }, total.toFixed(1)))
        : h('span', { class: 'score-total', title: 'fused score: the sum of the contributions' }, 'score ', h('strong', { 'data-testid': 'score-total' }, fmtNum(score, 5))),
      h(
        'ul',
        { class: 'signals' },
        SIGNALS.map((name, i) => {
          const d = parts[i];
          const top = best && best[name] > 0 ? best[name] : 0;
          const share = top > 0 ? (d.contribution || 0) / top : 0;
          const rawText = d.raw === null || d.raw === undefined ? '' : name === 'recency' ? `age ${fmtNum(d.raw, 2)} d` : `raw ${fmtNum(d.raw, 3)}`;
          return h(
            'li',
            { class: `signal${d.rank === null ? ' absent' : ''}`, 'data-testid': `signal-${name}`, title: `${rawText}${rawText ? '; ' : ''}bar: against the best result of this signal` },
            h('span', { class: 'signal-name' }, name),
            h('span', { class: 'signal-rank', 'data-testid': 'signal-rank' }, d.rank === null ? 'not ranked' : `rank ${d.rank}`),
            shareBar(share),
            h('span', { class: 'signal-contribution', 'data-testid': 'signal-contribution', 'data-share': share.toFixed(4) }, points ? `+${shown(d).toFixed(1)}` : `+${fmtNum(d.contribution, 5)}`),
          );
        }),
        lift
          ? h(
              'li',
              { class: 'signal context', 'data-testid': 'signal-context', title: 'memories of the same session matched too' },
              h('span', { class: 'signal-name' }, 'session'),
              h('span', { class: 'signal-rank' }, ''),
              h('span', { class: 'signal-contribution', 'data-testid': 'signal-contribution' }, `+${shown(lift).toFixed(1)}`),
            )
          : null,
        demotion
          ? h(
              'li',
              { class: 'signal feedback', 'data-testid': 'signal-feedback', title: `${demotion.steps} wrong/stale mark${demotion.steps === 1 ? '' : 's'} beyond the useful ones: score ×1/${2 ** demotion.steps}` },
              h('span', { class: 'signal-name' }, 'feedback'),
              h('span', { class: 'signal-rank' }, `×1/${2 ** demotion.steps}`),
              h('span', { class: 'signal-contribution', 'data-testid': 'signal-contribution' }, points ? `−${(-shown(demotion)).toFixed(1)}` : `−${fmtNum(-demotion.contribution, 5)}`),
            )
          : null,
      ),
      details.rerank !== null && details.rerank !== undefined ? h('span', { class: 'muted' }, `rerank ${fmtNum(details.rerank, 3)}`) : null,
      details.newerThan ? h('span', { class: 'muted' }, `newer than ${details.newerThan}`) : null,
    );
  }

  function shareBar(share) {
    const w = 48;
    return svg('svg', { class: 'share', width: w, height: 8, viewBox: `0 0 ${w} 8`, 'aria-hidden': 'true' }, svg('rect', { class: 'share-bg', x: 0, y: 0, width: w, height: 8, rx: 2 }), svg('rect', { class: 'share-fg', x: 0, y: 0, width: Math.max(0, Math.min(1, share)) * w, height: 8, rx: 2 }));
  }

  function markSelected() {
    const id = state.detail && !$('detail').hidden ? state.detail.memory.id : null;
    for (const li of $('results').children) li.classList.toggle('selected', li.getAttribute('data-id') === id);
  }

  async function runSearch() {
    const q = $('search-input').value.trim();
    if (!q) return browse();
    state.mode = 'search';
    state.query = q;
    state.searchLimit = SEARCH_STEP;
    return loadList();
  }

  async function browse() {
    state.mode = 'browse';
    state.query = '';
    state.cursor = null;
    return loadList();
  }

  // --- memory detail ---------------------------------------------------------------------------------------

  async function openDetail(id, opener) {
    const r = await api('GET', memoryPath(id), { query: { namespace: ns() } });
    if (opener) state.opener = opener;
    const wasOpen = !$('detail').hidden;
    renderDetail(r);
    show($('detail'), true);
    $('workspace').classList.add('with-detail');
    markSelected();
    if (!wasOpen || opener) $('detail-title').focus();
  }

  function closeDetail(restoreFocus = true) {
    if ($('detail').hidden) return;
    saveDraft();
    show($('detail'), false);
    $('workspace').classList.remove('with-detail');
    markSelected();
    if (restoreFocus) {
      const back = state.opener && state.opener.isConnected ? state.opener : $('search-input');
      back.focus();
    }
  }

  function saveDraft() {
    if (!state.detail || $('replace-form').hidden) return;
    const text = $('replace-text').value;
    if (text !== state.detail.memory.text) state.drafts.set(state.detail.memory.id, text);
    else state.drafts.delete(state.detail.memory.id);
  }

  function renderDetail(r) {
    const m = r.memory;
    if (state.detail && state.detail.memory.id !== m.id) saveDraft();
    state.detail = r;
    $('detail').setAttribute('data-id', m.id);
    $('detail-title').textContent = m.kind === 'route' && m.route ? `Route: ${m.route.title}` : `${m.kind[0].toUpperCase()}${m.kind.slice(1)}`;
    fill($('detail-badges'), badge(m.kind, `kind kind-${m.kind}`), ...(isActive(m) ? [badge('live', 'state state-live', 'detail-state')] : states(m).map((s) => badge(s, `state state-${s}`, 'detail-state'))));
    $('detail-text').textContent = m.text;

    const field = (label, value, testid) => [h('dt', {}, label), h('dd', { 'data-testid': testid }, value)];
    const link = (id) => h('button', { type: 'button', class: 'link', onclick: () => void act(null, () => openDetail(id, null)) }, id);
    fill($('detail-fields'), 
      ...field('Id', h('code', {}, m.id), 'detail-id'),
      ...field('Namespace', m.namespace),
      ...field('Importance', String(m.importance), 'detail-importance'),
      ...field('Tags', m.tags.length ? m.tags.map((t) => h('span', { class: 'tag' }, `#${t}`)) : '—', 'detail-tags'),
      ...field('Created', timeEl(m.createdAt)),
      ...field('Updated', timeEl(m.updatedAt)),
      ...(m.expiresAt ? field('Expires', timeEl(m.expiresAt)) : []),
      ...(m.taskId ? field('Task', m.taskId) : []),
      ...(m.supersedes ? field('Replaces', link(m.supersedes)) : []),
      ...(m.supersededBy ? field('Replaced by', link(m.supersededBy), 'detail-replaced-by') : []),
      ...(m.forgottenAt ? field('Forgotten', [timeEl(m.forgottenAt), m.forgetReason ? ` — ${m.forgetReason}` : '']) : []),
      ...(m.route ? [...field('Route', m.route.description || '—'), ...field('Paths', h('ul', { class: 'paths' }, m.route.paths.map((p) => h('li', {}, h('code', {}, p)))))] : []),
    );
    const meta = Object.entries(m.metadata ?? {}).filter(([, v]) => v !== undefined && v !== null && v !== '');
    fill($('detail-provenance'), ...(meta.length ? meta.flatMap(([k, v]) => field(k, typeof v === 'string' ? v : JSON.stringify(v))) : field('source', 'unknown')));

    fill($('detail-history'), 
      ...r.history.map((x) => {
        const here = x.id === m.id;
        return h(
          'li',
          { class: here ? 'current' : '', 'data-testid': 'history-item', 'data-id': x.id, 'aria-current': here ? 'true' : undefined },
          h('div', { class: 'history-meta' }, timeEl(x.createdAt), ' ', ...(isActive(x) ? [badge('live', 'state state-live')] : states(x).map((s) => badge(s, `state state-${s}`))), here ? h('span', { class: 'muted' }, ' (shown)') : link(x.id)),
          h('p', { class: 'history-text' }, x.text),
        );
      }),
    );

    const canReplace = !m.forgottenAt && !m.supersededBy && m.kind !== 'route';
    show($('replace-open'), canReplace);
    const draft = state.drafts.get(m.id);
    show($('replace-form'), canReplace && draft !== undefined);
    $('replace-text').value = draft ?? m.text;
    show($('forget-form'), !m.forgottenAt);
    show($('restore'), Boolean(m.forgottenAt));
    document.dispatchEvent(new CustomEvent('cairn:detail', { detail: r }));
  }

  function openReplace() {
    show($('replace-form'), true);
    const ta = $('replace-text');
    if (!state.drafts.has(state.detail.memory.id)) ta.value = state.detail.memory.text;
    ta.focus();
  }

  async function saveReplace(button) {
    const old = state.detail.memory;
    const text = $('replace-text').value;
    if (!text.trim()) return showError(new ApiError(0, 'PAGE', 'the new text is empty', 'write what the memory should say now', 'text'));
    await act(button, async () => {
      const r = await api('POST', memoryPath(old.id, 'replace'), { query: { namespace: old.namespace }, body: { text } });
      state.drafts.delete(old.id);
      show($('replace-form'), false);
      say(`Replaced: the new memory is ${r.id}; the old one no longer shows in searches.`);
      await openDetail(r.id, null);
      await loadList();
      await loadNamespaces();
    });
  }

  async function forget(button) {
    const m = state.detail.memory;
    const reason = $('forget-reason').value.trim();
    await act(button, async () => {
      await api('POST', memoryPath(m.id, 'forget'), { query: { namespace: m.namespace }, body: reason ? { reason } : {} });
      $('forget-reason').value = '';
      say(`Forgotten: ${truncate(m.text, 60)}. Restore brings it back.`);
      await openDetail(m.id, null);
      await loadList();
      await loadNamespaces();
      $('restore').focus();
    });
  }

  async function restore(button) {
    const m = state.detail.memory;
    await act(button, async () => {
      await api('POST', memoryPath(m.id, 'restore'), { query: { namespace: m.namespace }, body: {} });
      say(`Restored: ${truncate(m.text, 60)}.`);
      await openDetail(m.id, null);
      await loadList();
      await loadNamespaces();
    });
  }

  // --- routes ----------------------------------------------------------------------------------------------

  async function loadRoutes() {
    const r = await api('GET', '/routes', { query: { namespace: ns() } });
    fill($('routes-list'), 
      ...r.routes.map((m) => {
        const route = m.route ?? { title: m.text, description: '', paths: [] };
        return h(
          'li',
          { class: 'route', 'data-testid': 'route-item', 'data-id': m.id },
          h('h3', { 'data-testid': 'route-item-title' }, route.title),
          route.description ? h('p', { 'data-testid': 'route-item-description' }, route.description) : null,
          h('ul', { class: 'paths', 'data-testid': 'route-item-paths' }, route.paths.map((p) => h('li', {}, h('code', {}, p)))),
          h('p', { class: 'muted' }, timeEl(m.createdAt), ' · ', h('button', { type: 'button', class: 'link', onclick: (e) => void act(null, () => openDetail(m.id, e.currentTarget)) }, 'details')),
        );
      }),
    );
    show($('routes-empty'), r.routes.length === 0);
  }

  async function saveRoute(button) {
    const title = $('route-title').value.trim();
    const description = $('route-description').value.trim();
    const paths = $('route-paths').value.split(/[\n,]/u).map((p) => p.trim()).filter(Boolean);
    await act(button, async () => {
      const r = await api('POST', '/routes', { body: { title, description, paths, namespace: ns() } });
      say(r.duplicate ? `That route already exists (${r.id}).` : `Route added: ${title}.`);
      $('route-form').reset();
      await loadRoutes();
    });
  }

  // --- charts ----------------------------------------------------------------------------------------------

  async function loadCharts() {
    const r = await api('GET', '/stats', { query: { namespace: ns() } });
    $('charts-namespace').textContent = r.namespace;
    const c = r.counts;
    $('charts-counts').textContent = c ? `${c.live} live · ${c.forgotten} forgotten · ${c.superseded} replaced · ${c.expired} expired` : 'Nothing stored here yet.';
    drawCreated(r.createdPerDay);
    drawHistogram(r.recalls.histogram);
    drawTop(r.recalls.top);
    drawNever(r.recalls.neverRecalled, r.recalls.live);
  }

  /** Days from the first to the last with a count, gaps filled with 0, the last 60 at most. */
  function fillDays(perDay) {
    if (!perDay.length) return [];
    const counts = new Map(perDay.map((d) => [d.day, d.count]));
    const days = perDay.map((d) => d.day).sort();
    const out = [];
    const end = new Date(`${days[days.length - 1]}T00:00:00Z`);
    const start = new Date(Math.max(Date.parse(`${days[0]}T00:00:00Z`), end.getTime() - 59 * 86_400_000));
    for (let d = start; d <= end; d = new Date(d.getTime() + 86_400_000)) {
      const key = d.toISOString().slice(0, 10);
      out.push({ label: key, value: counts.get(key) ?? 0 });
    }
    return out;
  }

  /** A vertical bar chart; each bar has a title, the whole a text summary for screen readers. */
  function barChart(data, { unit, summary, testid, labelEvery }) {
    const W = 520;
    const H = 200;
    const left = 34;
    const bottom = 34;
    const top = 12;
    const plotW = W - left - 8;
    const plotH = H - top - bottom;
    const max = Math.max(1, ...data.map((d) => d.value));
    const step = plotW / Math.max(1, data.length);
    const barW = Math.max(2, Math.min(48, step * 0.7));
    const chart = svg('svg', { class: 'chart-svg', viewBox: `0 0 ${W} ${H}`, role: 'img', 'aria-label': summary, 'data-testid': testid });
    // Whole-number ticks, each once: with a maximum of 1, half-way would round to 1 a second time.
    for (const v of [...new Set([0, Math.round(max / 2), max])]) {
      const y = top + plotH - (v / max) * plotH;
      chart.append(svg('line', { class: 'grid', x1: left, x2: W - 8, y1: y, y2: y }), svg('text', { class: 'axis', x: left - 6, y: y + 4, 'text-anchor': 'end', 'data-tick': v }, String(v)));
    }
    // Labels far enough apart not to touch (about 7 units a character at the axis font size).
    const widest = Math.max(1, ...data.map((d) => String(d.short ?? d.label).length)) * 7 + 8;
    const every = labelEvery ?? Math.max(1, Math.ceil(widest / step));
    const labelled = data.map((_, i) => i % every === 0);
    // The last day is labelled too, in place of the label before it when the two would touch.
    if (data.length > 1 && !labelled[data.length - 1]) {
      labelled[data.length - 1] = true;
      const previous = labelled.lastIndexOf(true, data.length - 2);
      if (previous >= 0 && (data.length - 1 - previous) * step < widest) labelled[previous] = false;
    }
    data.forEach((d, i) => {
      const x = left + i * step + (step - barW) / 2;
      const hgt = (d.value / max) * plotH;
      chart.append(svg('rect', { class: 'bar', x, y: top + plotH - hgt, width: barW, height: Math.max(hgt, d.value > 0 ? 1 : 0), 'data-value': d.value }, svg('title', {}, `${d.label}: ${d.value} ${unit}`)));
      if (labelled[i]) chart.append(svg('text', { class: 'axis x-label', x: x + barW / 2, y: H - bottom + 16, 'text-anchor': 'middle' }, d.short ?? d.label));
    });
    return chart;
  }

  function drawCreated(perDay) {
    const data = fillDays(perDay).map((d) => ({ ...d, short: d.label.slice(5) }));
    const total = data.reduce((s, d) => s + d.value, 0);
    fill($('chart-created'), 
      data.length ? barChart(data, { unit: 'memories', summary: `${total} memories created over ${data.length} day${data.length === 1 ? '' : 's'}, at most ${Math.max(...data.map((d) => d.value))} in a day`, testid: 'svg-created' }) : h('p', { class: 'empty' }, 'No memories yet.'),
    );
  }

  function drawHistogram(histogram) {
    const data = histogram.map((b) => ({ label: `${b.bucket} recall${b.bucket === '1' ? '' : 's'}`, short: b.bucket, value: b.memories }));
    fill($('chart-histogram'), 
      barChart(data, { unit: 'memories', summary: `Live memories by recall count: ${data.map((d) => `${d.short}: ${d.value}`).join(', ')}`, testid: 'svg-histogram', labelEvery: 1 }),
    );
  }

  function drawTop(top) {
    if (!top.length) {
      fill($('chart-top'), h('p', { class: 'empty' }, 'Nothing recalled yet.'));
      return;
    }
    const W = 520;
    const rowH = 22;
    const labelW = 300;
    const H = top.length * rowH + 4;
    const max = Math.max(1, ...top.map((t) => t.count));
    const chart = svg('svg', { class: 'chart-svg', viewBox: `0 0 ${W} ${H}`, role: 'img', 'aria-label': `Most recalled: ${top.map((t) => `${truncate(t.text, 40)} (${t.count})`).join('; ')}`, 'data-testid': 'svg-top' });
    top.forEach((t, i) => {
      const y = i * rowH + 2;
      const w = ((W - labelW - 40) * t.count) / max;
      chart.append(
        svg('text', { class: 'label', x: 0, y: y + 15 }, truncate(t.text, 40), svg('title', {}, t.text)),
        svg('rect', { class: 'bar', x: labelW, y: y + 3, width: Math.max(1, w), height: rowH - 8 }, svg('title', {}, `${t.count} recalls, last ${fmtDate(t.lastAt)}`)),
        svg('text', { class: 'axis', x: labelW + w + 6, y: y + 15 }, String(t.count)),
      );
    });
    fill($('chart-top'), chart);
  }

  function drawNever(never, live) {
    const W = 520;
    const share = live ? never / live : 0;
    const chart = svg(
      'svg',
      { class: 'chart-svg', viewBox: `0 0 ${W} 40`, role: 'img', 'aria-label': `${never} of ${live} live memories never recalled`, 'data-testid': 'svg-never' },
      svg('rect', { class: 'share-bg', x: 0, y: 8, width: W, height: 24, rx: 4 }),
      svg('rect', { class: 'bar warn', x: 0, y: 8, width: share * W, height: 24, rx: 4 }, svg('title', {}, `${never} never recalled`)),
    );
    fill($('chart-never'), h('p', { class: 'big-number' }, h('strong', { 'data-testid': 'never-recalled' }, String(never)), ` of ${live} live memories never recalled`), chart);
  }

  // --- quarantine ------------------------------------------------------------------------------------------

  async function loadQuarantine() {
    const status = $('quarantine-status').value;
    const query = { status };
    const source = $('quarantine-source').value.trim();
    const reason = $('quarantine-reason-filter').value.trim();
    if (source) query.source = source;
    if (reason) query.reason = reason;
    const r = await api('GET', '/quarantine', { query });
    const top = Object.entries(r.byReason || {}).slice(0, 3).map(([why, n]) => `${n} × ${why}`).join('; ');
    $('quarantine-total').textContent = `${r.total} ${status} in total; ${r.matched} match${r.matched > r.entries.length ? ` (showing the newest ${r.entries.length})` : ''}${top ? `. Most common: ${top}` : ''}`;
    fill($('quarantine-rows'), ...r.entries.map(quarantineRow));
    show($('quarantine-empty'), r.entries.length === 0);
    $('quarantine-empty').textContent = status === 'held' ? 'Nothing is held for review.' : 'Nothing here.';
    // review.js adds the selection and the bulk decision; it acts on the filter this list was loaded with.
    document.dispatchEvent(new CustomEvent('cairn:quarantine', { detail: { filter: query, result: r } }));
  }

  function quarantineRow(e) {
    const decision =
      e.status === 'held'
        ? quarantineForm(e)
        : h('span', {}, e.reason ? `${e.status}: ${e.reason}` : e.status, e.memoryIds && e.memoryIds.length ? h('span', { class: 'muted' }, ` → ${e.memoryIds.join(', ')}`) : '');
    return h(
      'tr',
      { 'data-testid': 'quarantine-row', 'data-id': e.id },
      h('td', {}, timeEl(e.createdAt), e.attempts > 1 ? h('div', { class: 'muted' }, `${e.attempts} attempts`) : null),
      h('td', { 'data-testid': 'quarantine-namespace' }, e.namespace),
      h('td', {}, [e.source, e.agent].filter(Boolean).join(' / ') || '—', e.op ? h('div', { class: 'muted' }, e.op) : null),
      h(
        'td',
        { title: e.anchor ? `closest to ${e.anchor} (${e.pass})` : '' },
        h('span', { 'data-testid': 'quarantine-score' }, fmtNum(e.score, 3)),
        h('ul', { class: 'muted reasons', 'data-testid': 'quarantine-reasons' }, ...(e.reasons || []).map((why) => h('li', {}, why))),
      ),
      h(
        'td',
        { class: 'preview' },
        h('span', { 'data-testid': 'quarantine-preview' }, e.preview === null ? h('span', { class: 'muted' }, '(text gone)') : `${e.preview}…`),
        e.preview === null ? null : revealButton(e),
      ),
      h('td', {}, h('code', { title: e.hash, 'data-testid': 'quarantine-hash' }, `${e.hash.slice(0, 12)}…`)),
      h('td', {}, badge(e.status, `state state-${e.status}`)),
      h('td', {}, decision),
    );
  }

  /** The full held text for an admin, on an explicit click; the server records the reveal (not the text). */
  function revealButton(e) {
    const out = h('pre', { class: 'revealed', hidden: true, 'data-testid': 'quarantine-text' });
    const button = h('button', { type: 'button', class: 'secondary', 'data-testid': 'quarantine-reveal' }, 'Reveal full text');
    button.addEventListener('click', () =>
      void act(button, async () => {
        const r = await api('GET', `/quarantine/${encodeURIComponent(e.id)}`, { query: { reveal: '1' } });
        out.textContent = r.entry.text === null ? '(the text is gone)' : r.entry.text;
        out.hidden = false;
        button.hidden = true;
      }),
    );
    return h('div', {}, button, out);
  }

  function quarantineForm(e) {
    const inputId = `q-reason-${e.id}`;
    const input = h('input', { type: 'text', id: inputId, required: true, 'aria-required': 'true', placeholder: 'why it is safe (required to release)', 'data-testid': 'quarantine-reason' });
    const release = h('button', { type: 'submit', value: 'release', 'data-testid': 'quarantine-release' }, 'Release');
    const drop = h('button', { type: 'submit', value: 'drop', class: 'danger', formNoValidate: true, 'data-testid': 'quarantine-drop' }, 'Drop');
    const form = h('form', { class: 'decision', noValidate: true }, h('label', { for: inputId, class: 'visually-hidden' }, `Reason for held write ${e.id}`), input, release, drop);
    form.addEventListener('submit', (event) => {
      event.preventDefault();
      const which = event.submitter && event.submitter.value === 'drop' ? 'drop' : 'release';
      const reason = input.value.trim();
      if (which === 'release' && !reason) {
        showError(new ApiError(0, 'PAGE', 'a release needs a reason: why is the held text safe to store?', undefined, 'reason'));
        input.focus();
        return;
      }
      void act(event.submitter, async () => {
        const r = await api('POST', `/quarantine/${encodeURIComponent(e.id)}/${which}`, { body: reason ? { reason } : {} });
        if (which === 'release') say(`Released into ${e.namespace}${r.memoryIds && r.memoryIds.length ? ` as ${r.memoryIds.join(', ')}` : ''}.`);
        else say('Dropped: the held text is gone.');
        await loadQuarantine();
        await loadNamespaces();
      });
    });
    return form;
  }

  // --- erasure ---------------------------------------------------------------------------------------------

  function eraseBy() {
    return document.querySelector('input[name="erase-kind"]:checked').value;
  }

  function startErase() {
    const by = eraseBy();
    const target = $('erase-target').value.trim();
    if (!target) {
      showError(new ApiError(0, 'PAGE', `name the ${by} to erase`, undefined, by));
      $('erase-target').focus();
      return;
    }
    clearAlert();
    state.erase = { by, target };
    $('erase-confirm-text').textContent =
      by === 'namespace'
        ? `Every memory, its history, vectors, events, snapshots and held writes in namespace “${target}” will be erased for good.`
        : `Every memory of subject “${target}”, in every namespace, with its history, vectors and events, will be erased for good.`;
    $('erase-confirm-name').textContent = target;
    $('erase-confirm-input').value = '';
    $('erase-confirm-go').disabled = true;
    show($('erase-confirm'), true);
    $('erase-confirm-input').focus();
  }

  function cancelErase() {
    state.erase = null;
    show($('erase-confirm'), false);
    $('erase-target').focus();
  }

  async function confirmErase(button) {
    const pending = state.erase;
    if (!pending || $('erase-confirm-input').value.trim() !== pending.target) return;
    await act(button, async () => {
      const r = await api('POST', '/erase', { body: { [pending.by]: pending.target } });
      state.erase = null;
      show($('erase-confirm'), false);
      showCertificate(r.certificate);
      say(`Erased ${pending.by} ${pending.target}. The certificate is ready to download.`);
      await loadNamespaces();
      if (pending.by === 'subject' || pending.target === state.namespace) await loadList();
    });
  }

  function showCertificate(signed) {
    const c = signed.certificate;
    const scope = c.scope.namespace !== undefined ? `namespace ${c.scope.namespace}` : `subject ${c.scope.subject}`;
    const field = (label, value, testid) => [h('dt', {}, label), h('dd', { 'data-testid': testid }, value)];
    fill($('erase-summary'), 
      ...field('Certificate', h('code', {}, c.id), 'certificate-id'),
      ...field('Erased', scope, 'certificate-scope'),
      ...field('Issued', timeEl(c.issuedAt)),
      ...field(
        'Removed',
        Object.entries(c.counts)
          .filter(([, n]) => n > 0)
          .map(([k, n]) => `${k} ${n}`)
          .join(', ') || 'nothing was stored',
        'certificate-counts',
      ),
      ...field('State checksum', h('code', { class: 'wrap' }, c.stateChecksum)),
      ...field('Signature', 'RS256 (JWS); check it with: cairn verify-certificate <file> --key <public.pem>'),
    );
    fill($('erase-checks'), ...c.checks.map((k) => h('li', { class: k.passed ? 'passed' : 'failed' }, h('strong', {}, k.passed ? '✓ ' : '✗ '), `${k.name}: ${k.detail}`)));
    if (state.certificateUrl) URL.revokeObjectURL(state.certificateUrl);
    state.certificateUrl = URL.createObjectURL(new Blob([`${JSON.stringify(signed, null, 2)}\n`], { type: 'application/json' }));
    const a = $('erase-download');
    a.href = state.certificateUrl;
    a.download = `cairn-erasure-${c.id}.json`;
    show($('erase-result'), true);
    a.focus();
  }

  // --- tokens ----------------------------------------------------------------------------------------------

  async function loadTokens() {
    const r = await api('GET', '/tokens');
    fill($('tokens-rows'), 
      ...r.tokens.map((t) => {
        const mine = state.session && t.id === state.session.token.id;
        const revoke = h('button', { type: 'button', class: 'danger small', 'data-testid': 'token-revoke' }, 'Revoke');
        revoke.addEventListener('click', () => {
          if (revoke.getAttribute('data-armed') !== '1') {
            revoke.setAttribute('data-armed', '1');
            revoke.textContent = mine ? 'Revoke this session’s token?' : 'Confirm revoke';
            return;
          }
          void act(revoke, async () => {
            await api('DELETE', `/tokens/${encodeURIComponent(t.id)}`);
            say(`Revoked ${t.id}.`);
            await loadTokens();
          });
        });
        return h(
          'tr',
          { 'data-testid': 'token-row', 'data-id': t.id },
          h('td', {}, h('code', {}, t.id), mine ? h('span', { class: 'muted' }, ' (you)') : null),
          h('td', {}, t.name ?? '—'),
          h('td', {}, badge(t.scope, `scope-${t.scope}`)),
          h('td', {}, t.namespaces.join(', ')),
          h('td', {}, badge(t.status, `state state-${t.status}`)),
          h('td', {}, timeEl(t.createdAt)),
          h('td', {}, t.expiresAt ? timeEl(t.expiresAt) : 'never'),
          h('td', {}, t.lastUsedAt ? timeEl(t.lastUsedAt) : '—'),
          h('td', {}, t.status === 'active' ? revoke : null),
        );
      }),
    );
  }

  async function createToken(button) {
    const namespaces = $('token-namespaces').value.split(',').map((s) => s.trim()).filter(Boolean);
    const body = { namespaces, scope: $('token-scope').value };
    if ($('token-expires').value.trim()) body.expires = $('token-expires').value.trim();
    if ($('token-name').value.trim()) body.name = $('token-name').value.trim();
    await act(button, async () => {
      const r = await api('POST', '/tokens', { body });
      $('token-form').reset();
      $('token-secret-value').value = r.token;
      show($('token-secret'), true);
      $('token-secret-value').select();
      say(`Created ${r.id}. Copy the secret now.`);
      await loadTokens();
    });
  }

  // --- wiring ----------------------------------------------------------------------------------------------

  /** Submit handler that never reloads the page and passes the submitting button. */
  function onSubmit(id, fn) {
    $(id).addEventListener('submit', (event) => {
      event.preventDefault();
      void fn(event.submitter ?? null);
    });
  }

  function isTyping(el) {
    if (!el) return false;
    const tag = el.tagName;
    return tag === 'INPUT' || tag === 'TEXTAREA' || tag === 'SELECT' || el.isContentEditable;
  }

  function wire() {
    onSubmit('login-form', (button) =>
      act(button, async () => {
        const r = await api('POST', '/login', { body: { token: $('login-token').value.trim() } });
        $('login-token').value = '';
        await startSession(r);
        say(`Logged in as ${r.token.name ?? r.token.id}.`);
      }),
    );
    $('logout').addEventListener('click', (event) =>
      act(event.currentTarget, async () => {
        await api('POST', '/logout', { body: {} });
        endSession();
        say('Logged out.');
      }),
    );
    $('namespace').addEventListener('change', (event) => void changeNamespace(event.currentTarget.value));

    for (const tab of document.querySelectorAll('[role="tab"]')) {
      tab.addEventListener('click', () => selectTab(tab.getAttribute('data-tab')));
      tab.addEventListener('keydown', onTabKey);
    }

    onSubmit('search-form', (button) => act(button, runSearch));
    $('browse-all').addEventListener('click', (event) => {
      $('search-input').value = '';
      void act(event.currentTarget, browse);
    });
    onSubmit('filter-form', (button) =>
      act(button, async () => {
        state.cursor = null;
        await loadList();
      }),
    );
    $('load-more').addEventListener('click', (event) =>
      act(event.currentTarget, async () => {
        if (state.mode === 'search') {
          state.searchLimit = Math.min(100, state.searchLimit + SEARCH_STEP);
          await loadList();
        } else await loadList(true);
      }),
    );

    $('detail-close').addEventListener('click', () => closeDetail());
    $('replace-open').addEventListener('click', openReplace);
    $('replace-cancel').addEventListener('click', () => {
      state.drafts.delete(state.detail.memory.id);
      show($('replace-form'), false);
      $('replace-open').focus();
    });
    onSubmit('replace-form', saveReplace);
    onSubmit('forget-form', forget);
    $('restore').addEventListener('click', (event) => void restore(event.currentTarget));

    onSubmit('route-form', saveRoute);
    onSubmit('quarantine-filter', (button) => act(button, loadQuarantine));
    $('quarantine-status').addEventListener('change', () => void act(null, loadQuarantine));

    onSubmit('erase-form', async () => startErase());
    for (const radio of document.querySelectorAll('input[name="erase-kind"]'))
      radio.addEventListener('change', () => {
        $('erase-target-label').textContent = eraseBy() === 'namespace' ? 'Namespace' : 'Subject (user id)';
        show($('erase-confirm'), false);
      });
    $('erase-confirm-input').addEventListener('input', () => {
      $('erase-confirm-go').disabled = !state.erase || $('erase-confirm-input').value.trim() !== state.erase.target;
    });
    $('erase-confirm-input').addEventListener('keydown', (event) => {
      if (event.key === 'Enter' && !$('erase-confirm-go').disabled) void confirmErase($('erase-confirm-go'));
    });
    $('erase-confirm-go').addEventListener('click', (event) => void confirmErase(event.currentTarget));
    $('erase-confirm-cancel').addEventListener('click', cancelErase);

    onSubmit('token-form', createToken);

    document.addEventListener('keydown', (event) => {
      if (event.defaultPrevented || event.ctrlKey || event.metaKey || event.altKey) return;
      if (event.key === '/' && !isTyping(document.activeElement) && state.session) {
        event.preventDefault();
        if (state.tab !== 'memories') selectTab('memories');
        $('search-input').focus();
        $('search-input').select();
      } else if (event.key === 'Escape') {
        if (!$('erase-confirm').hidden && $('erase-confirm').contains(document.activeElement)) cancelErase();
        else if (!$('detail').hidden) {
          event.preventDefault();
          closeDetail();
        }
      }
    });
  }

  // What the page's ES modules (curate.js, feed.js) build on: one set of helpers, one session, one API client.
  window.cairnPage = Object.freeze({
    $, h, fill, show, badge, timeEl, truncate, states, say, act, api, showError, ApiError, ns, memoryPath,
    state, loadList, openDetail, loadNamespaces, loadQuarantine, renderCard: card, openMemory: (id) => act(null, () => openDetail(id, null)),
  });

  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', () => void boot());
  else void boot();
})();
