// Curating memories by hand on the brain page: add one, edit its kind, tags and importance, export and import
// a namespace as JSON lines, and select several to forget, restore or tag at once. Built on the helpers app.js
// shares as window.cairnPage; like app.js, stored text reaches the page only as text.
const page = window.cairnPage;
const { $, h, show, act, api, say, showError, ApiError, ns, memoryPath } = page;

const tagList = (text) => text.split(',').map((t) => t.trim().replace(/^#/u, '')).filter(Boolean);

async function refresh() {
  await page.loadList();
  await page.loadNamespaces();
}

// --- add a memory ---------------------------------------------------------------------------------------------

function toggleAdd(open) {
  show($('add-form'), open);
  $('add-open').setAttribute('aria-expanded', String(open));
  if (open) $('add-text').focus();
}

async function addMemory(button) {
  const text = $('add-text').value;
  if (!text.trim()) return showError(new ApiError(0, 'PAGE', 'write what the memory should say', undefined, 'text'));
  const body = { text, namespace: ns(), kind: $('add-kind').value };
  if ($('add-importance').value !== '') body.importance = Number($('add-importance').value);
  const tags = tagList($('add-tags').value);
  if (tags.length) body.tags = tags;
  if ($('add-task').value.trim()) body.taskId = $('add-task').value.trim();
  await act(button, async () => {
    const r = await api('POST', '/memories', { body });
    $('add-form').reset();
    toggleAdd(false);
    say(r.duplicate ? `Already stored as ${r.id}: nothing new was saved.` : `Saved ${r.memory.kind} ${r.id} in ${r.memory.namespace}.`);
    await refresh();
    await page.openMemory(r.id);
  });
}

// --- edit kind, tags and importance ----------------------------------------------------------------------------

let editing = null;

function fillEdit(memory) {
  editing = memory;
  const editable = memory.kind !== 'route' && !memory.forgottenAt && !memory.supersededBy;
  show($('edit-form'), editable);
  if (!editable) return;
  $('edit-kind').value = memory.kind;
  $('edit-tags').value = memory.tags.join(', ');
  $('edit-importance').value = String(memory.importance);
}

async function saveEdit(button) {
  const m = editing;
  if (!m) return;
  const patch = {};
  if ($('edit-kind').value !== m.kind) patch.kind = $('edit-kind').value;
  const tags = tagList($('edit-tags').value);
  if (tags.join(',') !== m.tags.join(',')) patch.tags = tags;
  const importance = Number($('edit-importance').value);
  if (importance !== m.importance) patch.importance = importance;
  if (Object.keys(patch).length === 0) return say('Nothing to save: kind, tags and importance are as they were.');
  await act(button, async () => {
    await api('PATCH', memoryPath(m.id), { query: { namespace: m.namespace }, body: patch });
    say(`Saved: ${Object.keys(patch).join(', ')} of ${m.id}.`);
    await page.openMemory(m.id);
    await page.loadList();
  });
}

// --- export and import -----------------------------------------------------------------------------------------

function exportHref() {
  $('export-link').href = `/api/export?namespace=${encodeURIComponent(ns())}`;
  $('export-link').download = `cairn-${ns().replace(/[^\w.-]+/gu, '_')}.jsonl`;
}

async function importFile(input) {
  const file = input.files && input.files[0];
  if (!file) return;
  await act(null, async () => {
    const text = await file.text();
    const url = new URL('/api/import', location.origin);
    url.searchParams.set('namespace', ns());
    // The import body is JSON lines, not one JSON object: sent as is, with the page's CSRF token.
    const res = await fetch(url, { method: 'POST', credentials: 'same-origin', headers: { 'Content-Type': 'application/x-ndjson', 'X-CSRF-Token': page.state.csrf ?? '' }, body: text });
    const data = await res.json().catch(() => null);
    if (!res.ok) {
      const e = data && data.error;
      throw new ApiError(res.status, (e && e.code) || `HTTP ${res.status}`, (e && e.message) || res.statusText, e && e.hint, e && e.field);
    }
    const held = data.quarantined ? data.quarantined.length : 0;
    const first = data.errors && data.errors[0] ? `; line ${data.errors[0].line}: ${data.errors[0].message}` : '';
    // The held count first, so held lines cannot pass unnoticed (as the CLI's import summary does).
    say(`${held ? `HELD FOR REVIEW ${held} (not stored; see the Quarantine tab). ` : ''}Imported ${file.name}: ${data.imported} new, ${data.duplicate} already stored, ${data.rejected} rejected${first}.`);
    await refresh();
  });
  input.value = '';
}

// --- select several --------------------------------------------------------------------------------------------

const selected = new Map(); // id → memory

function updateBulk() {
  const n = selected.size;
  show($('bulk-bar'), n > 0);
  $('bulk-count').textContent = `${n} selected`;
  const memories = [...selected.values()];
  show($('bulk-forget'), memories.some((m) => !m.forgottenAt));
  show($('bulk-restore'), memories.some((m) => m.forgottenAt));
}

function addCheckboxes(memories) {
  const byId = new Map(memories.map((m) => [m.id, m]));
  for (const li of $('results').children) {
    if (li.querySelector('.select-box')) continue;
    const id = li.getAttribute('data-id');
    const m = byId.get(id);
    if (!m) continue;
    const box = h('input', { type: 'checkbox', class: 'select-box', checked: selected.has(id), 'aria-label': `Select: ${page.truncate(m.text, 60)}`, 'data-testid': 'memory-select' });
    box.addEventListener('change', () => {
      if (box.checked) selected.set(id, m);
      else selected.delete(id);
      li.classList.toggle('checked', box.checked);
      updateBulk();
    });
    li.classList.toggle('checked', selected.has(id));
    li.prepend(box);
  }
  // A memory no longer listed (a new page, a new filter) stays selected only while it is shown.
  const shown = new Set([...$('results').children].map((li) => li.getAttribute('data-id')));
  for (const id of [...selected.keys()]) if (!shown.has(id)) selected.delete(id);
  updateBulk();
}

/** Runs `fn` on each selected memory in turn; reports how many succeeded and the first refusal. */
async function eachSelected(button, verb, fn) {
  const memories = [...selected.values()];
  await act(button, async () => {
    let done = 0;
    let failure = null;
    for (const m of memories) {
      try {
        await fn(m);
        done++;
      } catch (err) {
        failure = failure ?? err;
      }
    }
    selected.clear();
    await refresh();
    if (failure) throw new ApiError(failure.status ?? 0, failure.code ?? 'PAGE', `${verb} ${done} of ${memories.length}; the others were refused: ${failure.message}`, failure.hint, failure.field);
    say(`${verb} ${done} memor${done === 1 ? 'y' : 'ies'}.`);
  });
}

/**
 * The kind, tags and importance fields of the add and the edit form (ids `<prefix>-kind`…). The kinds are
 * the browse filter's, less "any" and routes (those are added on their own tab).
 */
function memoryFields(prefix, container, position) {
  const kinds = [...$('filter-kind').options].map((o) => o.value).filter((k) => k && k !== 'route');
  const field = (name, label, hint, control) =>
    h('div', { class: 'field' }, h('label', { for: `${prefix}-${name}` }, label, hint ? h('span', { class: 'muted' }, ` (${hint})`) : null), control);
  const fields = [
    field('kind', 'Kind', '', h('select', { id: `${prefix}-kind`, 'data-testid': `${prefix}-kind` }, kinds.map((k) => h('option', { value: k, selected: k === 'note' }, k)))),
    field('tags', 'Tags', 'comma-separated', h('input', { id: `${prefix}-tags`, type: 'text', 'data-testid': `${prefix}-tags` })),
    field('importance', 'Importance', '1–10', h('input', { id: `${prefix}-importance`, type: 'number', min: 1, max: 10, step: 1, defaultValue: '5', 'data-testid': `${prefix}-importance` })),
  ];
  if (position === 'start') container.prepend(...fields);
  else container.append(...fields);
}

function wire() {
  memoryFields('add', $('add-fields'), 'start');
  memoryFields('edit', $('edit-fields'), 'end');
  $('add-open').addEventListener('click', () => toggleAdd($('add-form').hidden));
  $('add-cancel').addEventListener('click', () => {
    toggleAdd(false);
    $('add-open').focus();
  });
  $('add-form').addEventListener('submit', (event) => {
    event.preventDefault();
    void addMemory(event.submitter ?? null);
  });
  $('edit-form').addEventListener('submit', (event) => {
    event.preventDefault();
    void saveEdit(event.submitter ?? null);
  });
  $('import-file').addEventListener('change', (event) => void importFile(event.currentTarget));
  $('export-link').addEventListener('click', exportHref);
  $('bulk-forget').addEventListener('click', (event) =>
    eachSelected(event.currentTarget, 'Forgot', (m) => (m.forgottenAt ? Promise.resolve() : api('POST', memoryPath(m.id, 'forget'), { query: { namespace: m.namespace }, body: { reason: 'forgotten with others from the brain page' } }))),
  );
  $('bulk-restore').addEventListener('click', (event) =>
    eachSelected(event.currentTarget, 'Restored', (m) => (m.forgottenAt ? api('POST', memoryPath(m.id, 'restore'), { query: { namespace: m.namespace }, body: {} }) : Promise.resolve())),
  );
  $('bulk-tag-form').addEventListener('submit', (event) => {
    event.preventDefault();
    const tag = $('bulk-tag').value.trim().replace(/^#/u, '');
    if (!tag) return;
    void eachSelected(event.submitter ?? null, `Tagged #${tag}:`, (m) =>
      m.tags.includes(tag) ? Promise.resolve() : api('PATCH', memoryPath(m.id), { query: { namespace: m.namespace }, body: { tags: [...m.tags, tag] } }),
    ).then(() => ($('bulk-tag').value = ''));
  });
  $('bulk-clear').addEventListener('click', () => {
    selected.clear();
    for (const box of $('results').querySelectorAll('.select-box')) box.checked = false;
    for (const li of $('results').children) li.classList.remove('checked');
    updateBulk();
  });
  document.addEventListener('cairn:cards', (event) => addCheckboxes(event.detail.memories));
  document.addEventListener('cairn:detail', (event) => fillEdit(event.detail.memory));
  document.addEventListener('cairn:namespace', () => {
    selected.clear();
    updateBulk();
    exportHref();
  });
  exportHref();
}

wire();
