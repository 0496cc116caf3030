// How the page colours what it draws, the Focus head's labels, and probabilities as people read them. The names of
// the kinds of attention, the readings, the colour scales and the mean of all heads are the server's, sent once
// (attention_lab.core.looks.Names, kept in the page's state: assets/store.mjs).

export const LOG_FLOOR = 1e-4;
// White (weight 0) to dark blue (weight 1): plotly's sequential Blues, spelled out (plotly.js's own runs the other way).
const BLUES = ["#f7fbff", "#deebf7", "#c6dbef", "#9ecae1", "#6baed6", "#4292c6", "#2171b5", "#08519c", "#08306b"];
export const STYLE = {
  colorscale: BLUES.map((colour, i) => [i / (BLUES.length - 1), colour]),
  highlight: "#e4572e", // the current step, everywhere
  focusLine: "#222222", // the focused head's tile in the grid
};

/** A head's name as the Focus head menu writes it: "Layer l · Head h" (1-based) for layer and head (0-based). */
export function focusLabel(layer, head) {
  return `Layer ${layer + 1} · Head ${head + 1}`;
}

/** "Layer l · Head h" (1-based) as [layer, head] (0-based); null for the mean or anything else. */
export function focusOf(label) {
  const found = /^Layer (\d+) · Head (\d+)$/.exec(String(label || ""));
  return found && +found[1] > 0 && +found[2] > 0 ? [+found[1] - 1, +found[2] - 1] : null;
}

/** The Focus head choices of a decoding with `layers` and `heads`: the mean (named `mean`), then every head of the
 * deepest stack. */
export function focusChoices(layers, heads, mean) {
  const out = [mean];
  for (let l = 0; l < layers; l++) for (let h = 0; h < heads; h++) out.push(focusLabel(l, h));
  return out;
}

/** A probability as people read it: "42%", "0.3%", "<0.01%". */
export function percent(p) {
  if (p >= 0.1) return `${Math.round(100 * p)}%`;
  if (p >= 0.0001) return `${Number((100 * p).toPrecision(2))}%`;
  return "<0.01%";
}
