// The words two outputs share (two_models/words.mjs sharedWords: difflib's matching blocks, pair by pair) and the
// Jensen–Shannon distance between two rows (distance) against Python's own (align.py: difflib, scipy), on random
// lists of words drawn from a few, and random rows.

import assert from "node:assert/strict";
import {execFileSync} from "node:child_process";
import test from "node:test";
import {fileURLToPath} from "node:url";

import {distance, sharedWords} from "../../attention_lab/two_models/words.mjs";

const PYTHON = process.env.PYTHON || "python3"; // the tests' own (test_page_modules.py hands it in)
const REPO = fileURLToPath(new URL("../..", import.meta.url));

let seed = 7;
const random = () => ((seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648);
const words = (n) => [...Array(n)].map(() => ["the", "house", "is", "old", ".", "a"][Math.floor(random() * 6)]);
const row = (n) => [...Array(n)].map(() => (random() < 0.2 ? 0 : random()));

test("the shared words and the distances are Python's", () => {
  const cases = [...Array(60)].map((_, i) => {
    const n = 1 + (i % 9), m = 1 + ((i * 5) % 11);
    return {a: words(n), b: words(m), p: row(n), q: i % 7 === 0 ? row(n).map(() => 0) : row(n)};
  });
  const python = `import json, sys
from attention_lab.two_models.align import distance, shared_words
import numpy as np
cases = json.load(sys.stdin)
print(json.dumps([[shared_words(c["a"], c["b"]), distance(np.array(c["p"]), np.array(c["q"]))] for c in cases]))`;
  const theirs = JSON.parse(execFileSync(PYTHON, ["-c", python], {cwd: REPO, input: JSON.stringify(cases)}));
  cases.forEach((c, i) => {
    const [pairs, apart] = theirs[i];
    assert.deepEqual(sharedWords(c.a, c.b), pairs, JSON.stringify(c));
    assert.ok(Math.abs(distance(c.p, c.q) - apart) < 1e-12, `${distance(c.p, c.q)} against ${apart}`);
  });
});
