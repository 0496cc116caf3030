// The Beams tab's table made in the page, from the page's own beam search (decoding/beams.mjs keeps the live beams
// after each step, best first: its `history`), as beams/feature.py `table` makes it from the library's.
// tests/test_road.py holds the two equal.

import {pyRound} from "../assets/format.mjs";
import {textsOf} from "../assets/here.mjs";

/** The table for the decoding `run` of the page copy `model`: `run.beams`, the history of the beam search that wrote
 * it (null: none did). */
export function made(model, run) {
  const t = textsOf("beams"), decode = (tokens) => model.tokenizer.decode(tokens, {skip_special_tokens: true});
  const rows = (run.beams ?? []).flatMap((beams, i) =>
    beams.map(([tokens, score], rank) => [i + 1, rank + 1, decode(tokens), pyRound(score, 3)]));
  return rows.length ? {headers: [...t.headers], rows, op: "beams"} : {text: t.none, op: "none"};
}
