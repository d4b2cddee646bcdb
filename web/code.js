// Memory and the code on the brain page: stale marks on search results (a file moved, went or changed since
// the memory was written), a memory's code anchors, the useful / wrong / stale buttons of the detail panel,
// and in the Usage tab the feedback counts with the review list. Stored text reaches the page only as text.
const page = window.cairnPage;
const { $, h, badge } = page;

function staleBadges(memories) {
  for (const m of memories) {
    if (!m.stale || !m.stale.length) continue;
    const card = document.querySelector(`[data-testid="memory-card"][data-id="${CSS.escape(m.id)}"] .card-meta`);
    if (!card || card.querySelector('[data-testid="memory-stale"]')) continue;
    for (const s of m.stale) {
      const b = badge(`stale: ${s.path} ${s.reason}`, 'state state-stale', 'memory-stale');
      b.title = 'the code this memory is about has changed since it was written';
      card.append(b);
    }
  }
}

function feedbackSection(m) {
  const box = $('detail-code');
  const f = m.feedback ?? { useful: 0, wrong: 0, stale: 0 };
  const rate = (verdict, label) => {
    const button = h('button', { type: 'button', class: 'secondary small', 'data-testid': `feedback-${verdict}` }, `${label} (${f[verdict]})`);
    button.addEventListener('click', () =>
      void page.act(button, async () => {
        await page.api('POST', page.memoryPath(m.id, 'feedback'), { query: { namespace: m.namespace }, body: { verdict } });
        page.say(`Marked ${verdict}: ${page.truncate(m.text, 60)}.`);
        await page.openDetail(m.id, null);
      }),
    );
    return button;
  };
  const anchors = m.code?.anchors ?? [];
  box.replaceChildren(
    ...(anchors.length || m.code?.branch
      ? [
          h('h3', {}, 'Code'),
          h(
            'ul',
            { class: 'paths', 'data-testid': 'detail-anchors' },
            anchors.map((a) => h('li', {}, h('code', {}, a.path), a.symbol ? ` ${a.symbol}` : '', a.lines ? ` lines ${a.lines[0]}–${a.lines[1]}` : '')),
          ),
          h('p', { class: 'muted' }, m.code?.commit ? `written at commit ${m.code.commit.slice(0, 10)}` : 'written before the first commit', m.code?.branch ? ` · kept to branch ${m.code.branch}` : ''),
        ]
      : []),
    h('h3', {}, 'Was it right?'),
    h('div', { class: 'button-row', 'data-testid': 'detail-feedback' }, rate('useful', 'Useful'), rate('wrong', 'Wrong'), rate('stale', 'Stale')),
  );
}

async function loadFeedback() {
  const box = $('charts-feedback');
  const [stats, review] = await Promise.all([page.api('GET', '/stats', { query: { namespace: page.ns() } }), page.api('GET', '/review', { query: { namespace: page.ns() } })]);
  const f = stats.feedback ?? { useful: 0, wrong: 0, stale: 0, rated: 0, toReview: 0 };
  box.replaceChildren(
    h('p', { class: 'muted', 'data-testid': 'feedback-counts' }, `Feedback: ${f.useful} useful · ${f.wrong} wrong · ${f.stale} stale, on ${f.rated} memories; ${f.toReview} to review`),
    review.memories.length
      ? h(
          'ol',
          { class: 'review-list', 'data-testid': 'review-list' },
          review.memories.map((m) => {
            const open = h('button', { type: 'button', class: 'link', 'data-testid': 'review-open' }, page.truncate(m.text, 100));
            open.addEventListener('click', () => void page.openMemory(m.id));
            return h('li', { 'data-id': m.id }, open, h('span', { class: 'muted' }, ` wrong ${m.feedback?.wrong ?? 0} · stale ${m.feedback?.stale ?? 0} · useful ${m.feedback?.useful ?? 0}`));
          }),
        )
      : null,
  );
}

document.addEventListener('cairn:cards', (event) => staleBadges(event.detail.memories));
document.addEventListener('cairn:detail', (event) => feedbackSection(event.detail.memory));
document.addEventListener('cairn:tab', (event) => {
  if (event.detail.tab === 'charts') void page.act(null, loadFeedback);
});
document.addEventListener('cairn:namespace', () => {
  if (page.state.tab === 'charts') void page.act(null, loadFeedback);
});
