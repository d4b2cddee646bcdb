import * as assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { analyse, queryTerms } from './lexical.js';
import { americanSpelling } from './spelling.js';

describe('British spellings folded to American ones', () => {
  it('folds the -ise, -yse, -our, -re, -ence and -ogue families', () => {
    const cases: [string, string][] = [
      ['serialise', 'serialize'],
      ['finalised', 'finalized'],
      ['organisation', 'organization'],
      ['normalisations', 'normalizations'],
      ['prioritising', 'prioritizing'],
      ['criticise', 'criticize'],
      ['analyse', 'analyze'],
      ['paralysed', 'paralyzed'],
      ['behaviour', 'behavior'],
      ['favourite', 'favorite'],
      ['neighbourhood', 'neighborhood'],
      ['centre', 'center'],
      ['centred', 'centered'],
      ['metres', 'meters'],
      ['licence', 'license'],
      ['defences', 'defenses'],
      ['catalogue', 'catalog'],
      ['catalogued', 'cataloged'],
      ['programme', 'program'],
      ['judgement', 'judgment'],
      ['catalysed', 'catalyzed'],
      ['hydrolyse', 'hydrolyze'],
      ['analyser', 'analyzer'],
      // A prefixed word folds like the word without its prefix.
      ['dishonour', 'dishonor'],
      ['unfavourable', 'unfavorable'],
      ['disorganised', 'disorganized'],
      ['reorganise', 'reorganize'],
      ['uncentred', 'uncentered'],
    ];
    for (const [british, american] of cases) assert.equal(americanSpelling(british), american, british);
  });

  it('leaves words alone that are spelt so in American English too', () => {
    const same = ['promise', 'promising', 'exercised', 'surprise', 'enterprises', 'advertise', 'advised', 'revise', 'supervising', 'raise', 'praised', 'noise', 'cruise', 'disguise', 'otherwise', 'likewise', 'expertise', 'precise', 'concise', 'premises', 'merchandisers', 'franchise', 'sunrise', 'rising', 'arise', 'crises', 'hour', 'four', 'your', 'tour', 'pour', 'acre', 'genre', 'serialize', 'color',
      // Only -lyse is -lyze; prologue is no Prolog; a prefix does not hide a word spelt -ise everywhere.
      'geyser', 'geysers', 'prologue', 'prologues', 'enfranchise', 'disenfranchised', 'uncompromising', 'unpromising', 'imprecise', 'cerise'];
    for (const word of same) assert.equal(americanSpelling(word), word, word);
  });

  it('a query in one spelling shares its terms with a note in the other', () => {
    assert.ok(analyse('serialise money through toWire()').includes(queryTerms('serialize')[0] as string));
    assert.deepEqual(queryTerms('normalise the behaviour'), queryTerms('normalize the behavior'));
    assert.deepEqual(queryTerms('how is the code organised'), queryTerms('how is the code organized'));
    // Identifiers stay as written: only plain words and the parts of identifiers are words to fold.
    assert.ok(analyse('initialiseClient').includes('initialiseclient'));
  });

  it('a note on the prologue shares no term with one on Prolog, the language', () => {
    assert.deepEqual(queryTerms('prologue').filter((t) => queryTerms('Prolog').includes(t)), []);
    assert.deepEqual(queryTerms('unfavourable'), queryTerms('unfavorable'));
  });
});
