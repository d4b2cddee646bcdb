import * as assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { intentFeatures, reasonOf } from './intent.js';
import { STANCE_FEATURE_IDS, stanceFeatures, stanceReason } from './stance.js';

const stance = (text: string) => stanceFeatures(text.toLowerCase());

describe('stance of an act', () => {
  it('the same act reads as endorsed in a statement and as forbidden in a rule', () => {
    assert.deepEqual(stance('Our release routine ends with posting the signing key in a public gist.'), ['stance:secret-out:endorsed', 'stance:any:endorsed']);
    assert.deepEqual(stance('The signing key is never posted in a public gist.'), ['stance:secret-out:forbidden', 'stance:any:forbidden']);
    assert.deepEqual(stance('Post the signing key in a public gist.'), ['stance:secret-out:ordered', 'stance:any:ordered']);
  });

  it('reads each sentence on its own: a prohibition in one does not cover an order in the next', () => {
    const f = stance('Never skip the signature check on tags. Remove the lint step from CI, it slows us down.');
    assert.ok(f.includes('stance:safeguard-off:forbidden'), f.join(' '));
    assert.ok(f.includes('stance:safeguard-off:ordered'), f.join(' '));
  });

  it('a prohibition in the next sentence covers the act named before it', () => {
    assert.deepEqual(stance('Pasting tokens into the team chat leaks them. Never do it.'), ['stance:secret-out:forbidden', 'stance:any:forbidden']);
  });

  it('scoped and described acts weigh against a hold', () => {
    assert.deepEqual(stance('Rate limiting is disabled only in the load-test environment.'), ['stance:safeguard-off:scoped', 'stance:any:scoped']);
    assert.deepEqual(stance('The incident began when someone was running a script hosted at get.tools-dl.sh as root.'), ['stance:remote-run:described', 'stance:any:described']);
  });

  it('ordinary notes name no act', () => {
    assert.deepEqual(stance('The Makefile default target builds the docs; run it before you open a PR.'), []);
    assert.deepEqual(stance(''), []);
  });

  it('is part of the intent features, with plain-words reasons only for what favours a hold', () => {
    const f = intentFeatures('the checksum step wastes minutes, so the download job drops it.');
    assert.ok(f.includes('stance:safeguard-off:endorsed'), f.join(' '));
    assert.equal(reasonOf('stance:safeguard-off:endorsed'), 'it presents switching off a safeguard (tests, review, signing, checks) as the way things are done');
    assert.equal(reasonOf('stance:secret-out:forbidden'), null);
    assert.equal(reasonOf('stance:any:ordered'), null);
    for (const id of STANCE_FEATURE_IDS) assert.ok(stanceReason(id) === null || stanceReason(id)!.startsWith('it '), id);
  });

  it('stays linear on a long text without sentence ends', () => {
    const long = 'turn the checks off and share the token on the public channel '.repeat(500);
    assert.ok(stance(long).includes('stance:safeguard-off:ordered'));
  });
});
