// The live feed on the brain page: server-sent events from /api/feed, one for each memory stored in the
// namespace by any agent, hook or command sharing the database, filterable by source, agent and session.
// Connected only while its tab is open. Stored text reaches the page only as text.
const page = window.cairnPage;
const { $, h, badge, timeEl, show } = page;

const MAX_SHOWN = 200;
let source = null;
let received = 0;

function stateLine(text, live) {
  $('feed-state').textContent = text;
  $('feed-state').classList.toggle('live', Boolean(live));
  $('feed-state').setAttribute('data-state', live ? 'live' : 'off');
}

function item(m) {
  const p = m.metadata ?? {};
  const open = h('button', { type: 'button', class: 'card-text', 'data-testid': 'feed-open' }, m.text);
  open.addEventListener('click', () => void page.openMemory(m.id));
  return h(
    'li',
    { class: 'card feed-item', 'data-testid': 'feed-item', 'data-id': m.id },
    h(
      'div',
      { class: 'card-meta' },
      badge(m.kind, `kind kind-${m.kind}`, 'feed-kind'),
      timeEl(m.createdAt, 'feed-date'),
      h('span', { class: 'muted', 'data-testid': 'feed-provenance' }, [p.source, p.agent, p.sessionId].filter(Boolean).join(' · ') || 'unknown source'),
      m.tags.length ? h('span', { class: 'tags' }, m.tags.map((t) => h('span', { class: 'tag' }, `#${t}`))) : null,
    ),
    open,
  );
}

function disconnect() {
  if (source) source.close();
  source = null;
  stateLine('Not connected: open this tab to follow what is stored.', false);
}

function connect() {
  disconnect();
  const url = new URL('/api/feed', location.origin);
  url.searchParams.set('namespace', page.ns());
  for (const [param, id] of [['source', 'feed-source'], ['agent', 'feed-agent'], ['session', 'feed-session']]) {
    const v = $(id).value.trim();
    if (v) url.searchParams.set(param, v);
  }
  $('feed-list').replaceChildren();
  received = 0;
  show($('feed-empty'), true);
  stateLine('Connecting…', false);
  const filters = [...url.searchParams].filter(([k]) => k !== 'namespace').map(([k, v]) => `${k} ${v}`);
  const es = new EventSource(url, { withCredentials: true });
  source = es;
  es.addEventListener('ready', () => stateLine(`Live: following ${page.ns()}${filters.length ? `, only ${filters.join(', ')}` : ''}.`, true));
  es.addEventListener('memory', (event) => {
    const m = JSON.parse(event.data);
    received++;
    show($('feed-empty'), false);
    const list = $('feed-list');
    list.prepend(item(m));
    while (list.children.length > MAX_SHOWN) list.lastElementChild.remove();
    list.setAttribute('data-received', String(received));
  });
  // EventSource reconnects on its own, sending the last id, so nothing stored meanwhile is missed.
  es.addEventListener('error', () => {
    if (source === es) stateLine(es.readyState === EventSource.CLOSED ? 'Disconnected: the server refused the feed (log in again?).' : 'Reconnecting…', false);
  });
}

/** The feed's filters: the same three fields as browsing's (source, agent, session). */
function filterFields() {
  const fields = [
    ['feed-source', 'Source', 'mcp, pre-compact-hook…'],
    ['feed-agent', 'Agent', ''],
    ['feed-session', 'Session', ''],
  ].map(([id, label, placeholder]) =>
    h('div', { class: 'field' }, h('label', { for: id }, label), h('input', { id, type: 'text', size: 10, spellcheck: false, placeholder, 'data-testid': id })),
  );
  $('feed-filter').prepend(...fields);
}

filterFields();
document.addEventListener('cairn:tab', (event) => (event.detail.tab === 'feed' ? connect() : disconnect()));
document.addEventListener('cairn:namespace', () => {
  if (page.state.tab === 'feed') connect();
});
$('feed-filter').addEventListener('submit', (event) => {
  event.preventDefault();
  connect();
});
window.addEventListener('pagehide', disconnect);
