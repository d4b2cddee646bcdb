// Deciding several held writes at once on the brain page's quarantine view: select rows (or take every held
// write matching the filter the list was loaded with), choose release or drop, give a reason, see the
// server's dry-run count, then confirm. The server decides who may do it (an admin, for the namespaces its
// token covers); the page only asks. Built on the helpers app.js shares as window.cairnPage.
const page = window.cairnPage;
const { $, h, show, act, api, say, ApiError } = page;

/** The most ids one bulk call names (the API's limit); past it, the confirmation applies the filter again. */
const MAX_IDS = 10_000;

const selected = new Set(); // quarantine ids
let loaded = null; // { filter, result } of the list on screen
let pending = null; // what the last dry run counted, awaiting a confirmation

const scope = () => (selected.size > 0 && $('quarantine-scope-selected').checked ? 'selected' : 'matching');

function update() {
  const held = loaded !== null && loaded.filter.status === 'held' && loaded.result.matched > 0;
  show($('quarantine-bulk'), held);
  if (!held) cancel();
  $('quarantine-selected-count').textContent = `${selected.size} selected`;
  $('quarantine-scope-selected').disabled = selected.size === 0;
  if (selected.size === 0) $('quarantine-scope-matching').checked = true;
  const n = loaded ? loaded.result.matched : 0;
  $('quarantine-matching-count').textContent = `all ${n} matching the filter`;
  show($('quarantine-bulk-teach-label'), $('quarantine-bulk-action').value === 'drop');
}

function cancel() {
  pending = null;
  show($('quarantine-bulk-confirm'), false);
}

function addCheckboxes() {
  const held = new Set(loaded.filter.status === 'held' ? loaded.result.entries.filter((e) => e.status === 'held').map((e) => e.id) : []);
  for (const id of [...selected]) if (!held.has(id)) selected.delete(id);
  for (const tr of $('quarantine-rows').children) {
    const id = tr.getAttribute('data-id');
    const cell = h('td', { class: 'select-cell' });
    if (held.has(id)) {
      const box = h('input', { type: 'checkbox', checked: selected.has(id), 'aria-label': `Select held write ${id}`, 'data-testid': 'quarantine-select' });
      box.addEventListener('change', () => {
        if (box.checked) {
          selected.add(id);
          $('quarantine-scope-selected').checked = true;
        } else selected.delete(id);
        cancel();
        update();
      });
      cell.append(box);
    }
    tr.prepend(cell);
  }
}

/** The request both the dry run and the confirmation send: the selected ids, or the list's filter. */
function target() {
  if (scope() === 'selected') return { ids: [...selected] };
  const { status, ...filter } = loaded.filter;
  return { filter };
}

async function count(button) {
  const action = $('quarantine-bulk-action').value;
  const reason = $('quarantine-bulk-reason').value.trim();
  if (!reason) {
    $('quarantine-bulk-reason').focus();
    throw new ApiError(0, 'PAGE', `a ${action} of several held writes needs a reason: say why`, undefined, 'reason');
  }
  const teach = action === 'drop' ? $('quarantine-bulk-teach').checked : undefined;
  const sent = target();
  await act(button, async () => {
    const r = await api('POST', '/quarantine/bulk', { body: { action, reason, dryRun: true, ...sent } });
    if (r.matched === 0) {
      cancel();
      say(`Nothing held matches: there is nothing to ${action}.`);
      return;
    }
    // The confirmation acts on exactly the writes counted here (unless there are too many to name).
    pending = { action, reason, teach, matched: r.matched, body: r.ids.length <= MAX_IDS ? { ids: r.ids } : sent };
    const what = `${r.matched} held write${r.matched === 1 ? '' : 's'}`;
    $('quarantine-bulk-confirm-text').textContent =
      action === 'release'
        ? `Release ${what} into memory, with the reason “${reason}”? Each is stored as the original call would have stored it.`
        : `Drop ${what}, with the reason “${reason}”? The held text is deleted${teach ? ', and the filter learns from it so reworded copies are held for every agent' : ''}.`;
    $('quarantine-bulk-go').textContent = `${action === 'release' ? 'Release' : 'Drop'} ${r.matched}`;
    $('quarantine-bulk-go').className = action === 'drop' ? 'danger' : '';
    show($('quarantine-bulk-confirm'), true);
    $('quarantine-bulk-go').focus();
  });
}

async function confirm(button) {
  const p = pending;
  if (!p) return;
  await act(button, async () => {
    const r = await api('POST', '/quarantine/bulk', {
      body: { action: p.action, reason: p.reason, ...p.body, ...(p.teach === false ? { teach: false } : {}) },
    });
    cancel();
    selected.clear();
    $('quarantine-bulk-reason').value = '';
    const verb = p.action === 'release' ? 'Released' : 'Dropped';
    const done = `${verb} ${r.done.length} of ${p.matched} held write${p.matched === 1 ? '' : 's'}`;
    say(`${done}.`);
    await page.loadQuarantine();
    await page.loadNamespaces();
    if (r.failed.length > 0) throw new ApiError(0, 'PAGE', `${done}; ${r.failed.length} refused, the first: ${r.failed[0].error}`);
  });
}

function wire() {
  document.addEventListener('cairn:quarantine', (event) => {
    loaded = event.detail;
    cancel();
    addCheckboxes();
    update();
  });
  $('quarantine-bulk').addEventListener('submit', (event) => {
    event.preventDefault();
    void count(event.submitter ?? null).catch((err) => page.showError(err));
  });
  for (const id of ['quarantine-bulk-action', 'quarantine-bulk-reason', 'quarantine-bulk-teach', 'quarantine-scope-selected', 'quarantine-scope-matching'])
    $(id).addEventListener(id === 'quarantine-bulk-reason' ? 'input' : 'change', () => {
      cancel();
      update();
    });
  $('quarantine-bulk-go').addEventListener('click', (event) => void confirm(event.currentTarget));
  $('quarantine-bulk-cancel').addEventListener('click', () => {
    cancel();
    $('quarantine-bulk-reason').focus();
  });
}

wire();
