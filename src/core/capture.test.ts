import * as assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { extractStatements, isAcknowledgement, isHarnessMarkup, isSlashCommand, splitSentences, splitUnits } from './capture.js';

const texts = (message: string): string[] => extractStatements(message).map((s) => s.text);

/** Each message is kept whole, as typed, with the kind given. */
function assertKeptVerbatimAs(cases: [message: string, kind: string][]): void {
  for (const [message, kind] of cases) {
    const got = extractStatements(message);
    assert.equal(got.length, 1, message);
    assert.equal(got[0]?.text, message, 'verbatim');
    assert.equal(got[0]?.kind, kind, message);
  }
}

describe('capture of typed statements', () => {
  it('keeps decisions, constraints, conventions and open instructions verbatim, with a kind', () => {
    const cases: [string, string][] = [
      ['We decided to use pnpm workspaces instead of npm; npm breaks our symlinked packages.', 'decision'],
      ['Never touch the payment module until the PSP migration ships.', 'constraint'],
      ["Don't add new dependencies without asking me first.", 'constraint'],
      ['Database column names always use snake_case.', 'convention'],
      ['From now on, deploys go through the release branch.', 'decision'],
      ['Use pnpm.', 'note'],
      ['Make sure every endpoint gets an integration test.', 'convention'],
      ['Remember that the staging database is reset every Sunday night.', 'fact'],
      ['Can you always run prettier before you commit?', 'convention'],
      ['Could you add a changelog entry for the release?', 'note'],
    ];
    assertKeptVerbatimAs(cases);
  });

  it('takes the kind from what the statement does, before the cues inside it', () => {
    const cases: [string, string][] = [
      ['We decided that VAT is rounded per invoice line, never on the total.', 'decision'],
      ["We've agreed to never deploy on Fridays.", 'decision'],
      ['So we decided not to support IE11 at all.', 'decision'],
      ['The decision: payments must go through the PSP adapter.', 'decision'],
      ["We're going with Postgres rather than MySQL, it must scale.", 'decision'],
      ['Watch out: the PAYMENTS_V2_ENABLED flag is read once at boot, so a change needs a restart.', 'gotcha'],
      ['Careful, the staging database does not keep data over the weekend.', 'gotcha'],
      ['Our naming convention is that test files never end in .spec.ts.', 'convention'],
      ['The rule is simple: every migration gets a rollback script.', 'constraint'],
      // Without an opening that says what it does, the cues decide, as before.
      ['Never touch the payment module until the PSP migration ships.', 'constraint'],
      ['Remember that we never deploy on Fridays.', 'constraint'],
    ];
    assertKeptVerbatimAs(cases);
  });

  it('drops filler sentences around a statement, keeping the statement as typed', () => {
    assert.deepEqual(extractStatements('We decided that VAT is rounded per invoice line, never on the total. Please remember that.'), [
      { text: 'We decided that VAT is rounded per invoice line, never on the total.', kind: 'decision', importance: 7 },
    ]);
    assert.deepEqual(texts('FYI. The API allows at most 100 requests per minute per client. Note this for later!'), ['The API allows at most 100 requests per minute per client.']);
    assert.deepEqual(texts('Use pnpm for every workspace.\n\nPlease remember that.'), ['Use pnpm for every workspace.']);
    for (const filler of ['Please remember that.', 'Remember this for next time!', 'note that', 'Keep that in mind.', 'For the record.', "Don't forget it please."]) {
      assert.deepEqual(texts(filler), [], filler);
    }
    // Words inside a statement are never cut: only whole filler sentences go.
    assert.deepEqual(texts('Please remember that the staging database is reset every Sunday night.'), ['Please remember that the staging database is reset every Sunday night.']);
  });

  it('leaves out acknowledgements, slash commands, harness markup and chatter', () => {
    const noise = [
      'ok',
      'Thanks!',
      'go ahead',
      'yes, go ahead and do it',
      'ok thanks, looks good',
      'perfect 👍',
      'continue',
      '/compact',
      '/review 12',
      '<command-name>/clear</command-name>\n<command-message>clear</command-message>\n<command-args></command-args>',
      '<local-command-stdout>Compacted</local-command-stdout>',
      '<system-reminder>The user opened the file src/a.ts</system-reminder>',
      '<bash-input>npm test</bash-input>',
      '[Request interrupted by user for tool use]',
      'hmm that did not work',
      'still failing',
      'what does this function do?',
      'why is the build slow?',
      'fix it',
      'use the other one',
      'looks good to me, thanks',
    ];
    for (const n of noise) assert.deepEqual(texts(n), [], n);
  });

  it('trims leading and trailing acknowledgements but keeps the statement verbatim', () => {
    assert.deepEqual(texts('Ok. Use pnpm for every workspace. Thanks!'), ['Use pnpm for every workspace.']);
    assert.deepEqual(texts('Great, thanks.\n\nThe API allows at most 100 requests per minute per client.'), [
      'The API allows at most 100 requests per minute per client.',
    ]);
  });

  it('cuts a message into paragraphs and list items, dropping code, logs and embedded reminders', () => {
    const message = [
      'Some rules for this repo:',
      '- never commit directly to main',
      '- keep functions under 40 lines',
      '',
      '```ts',
      'const x = mustNotBeCaptured();',
      '```',
      '',
      'Error: something failed',
      '    at foo (src/a.ts:1:2)',
      '',
      '<system-reminder>Never store this reminder.</system-reminder>',
      'We will ship the beta on Friday, not Monday.',
    ].join('\n');
    assert.deepEqual(texts(message), ['never commit directly to main', 'keep functions under 40 lines', 'We will ship the beta on Friday, not Monday.']);
  });

  it('keeps a memory-mode input (# …) and judges a long paste sentence by sentence', () => {
    assert.deepEqual(texts('<user-memory-input># tests run against a local Postgres on port 5433</user-memory-input>'), ['tests run against a local Postgres on port 5433']);
    const paste = `${'This paragraph is background prose about the history of the project and its many modules. '.repeat(15)}We must keep the v1 API stable until March.`;
    assert.deepEqual(texts(paste), ['We must keep the v1 API stable until March.']);
  });

  it('helpers', () => {
    assert.equal(isAcknowledgement('Yes please, go ahead!'), true);
    assert.equal(isAcknowledgement('yes, use pnpm'), false);
    assert.equal(isSlashCommand('/usr/bin is where node lives'), false);
    assert.equal(isSlashCommand('/plugin install cairn'), true);
    assert.equal(isHarnessMarkup('<task-notification>done</task-notification>'), true);
    assert.equal(isHarnessMarkup('Wrap errors in <ErrorBoundary> components.'), false);
    assert.deepEqual(splitSentences('Use e.g. pnpm here. Then test it! Done?'), ['Use e.g. pnpm here.', 'Then test it!', 'Done?']);
    assert.deepEqual(splitUnits('a\nb\n\n* c\n1. d'), ['a\nb', 'c', 'd']);
  });
});
