// Heads in words, as attention_lab/core/naming.py writes them, for the messages the page makes itself
// (assets/here.mjs): describe_heads, from the server's own words (its HEADS_SAID and the kinds' names, sent as
// Feature.texts).

import {pyFormat} from "./format.mjs";

/** core/naming.py describe_heads of the heads `ablated` ([kind, layer, head], 0-based) of the model `c` (its
 * config): `said` the templates (HEADS_SAID), `kinds` each kind's name in running text, in the library's order. */
export function describeHeads(ablated, c, said, kinds) {
  const parts = [];
  for (const [kind, name] of Object.entries(kinds)) {
    const L = kind === "encoder" ? c.n_encoder_layers : c.n_decoder_layers, layers = new Map();
    const mine = [...new Set(ablated.filter((h) => h[0] === kind).map(([, l, h]) => l * c.n_heads + h))];
    for (const index of mine.sort((a, b) => a - b)) {
      const l = Math.floor(index / c.n_heads);
      layers.set(l, [...(layers.get(l) || []), (index % c.n_heads) + 1]);
    }
    const full = [...layers].filter(([, heads]) => heads.length === c.n_heads).map(([l]) => l);
    if (full.length === L) {
      parts.push(pyFormat(said.kind, {name}));
      continue;
    }
    for (const [l, heads] of layers) {
      const which = said[full.includes(l) ? "all" : heads.length === 1 ? "one" : "some"];
      parts.push(pyFormat(said.layer, {name, layer: l + 1, which: pyFormat(which, {numbers: heads.join(", ")})}));
    }
  }
  return parts.join("; ");
}

/** core/naming.py parse_heads of the choices `specs` ("kind:layer:head", 1-based, "*" for all) of the model `c`:
 * [[kind, layer, head], ...] 0-based; null for one it cannot read (the server then says what is wrong with it). */
export function parseHeads(specs, c) {
  const layers = {encoder: c.n_encoder_layers, decoder_self: c.n_decoder_layers, cross: c.n_decoder_layers};
  const found = new Map();
  for (const spec of specs) {
    const parts = /^\s*(\w+)\s*:\s*(\*|\d+)\s*:\s*(\*|\d+)\s*$/.exec(String(spec));
    if (!parts || !(parts[1] in layers)) return null;
    const span = (said, n) => (said === "*" ? [...Array(n).keys()] : [Number(said) - 1]);
    const [ls, hs] = [span(parts[2], layers[parts[1]]), span(parts[3], c.n_heads)];
    if ([...ls, ...hs].some((i) => i < 0) || ls.some((l) => l >= layers[parts[1]]) || hs.some((h) => h >= c.n_heads)) {
      return null;
    }
    for (const l of ls) for (const h of hs) found.set(`${parts[1]}:${l}:${h}`, [parts[1], l, h]);
  }
  return [...found.values()];
}
