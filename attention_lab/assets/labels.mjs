// Token text as plotly draws it. plotly renders a subset of HTML in labels and hovers, so a token reaches it only
// escaped ("<b>" is shown as text); the page's own elements set text with textContent and need none of this.

export const MAX_LABEL = 16; // characters of a token shown on an axis

export function escapeToken(token) {
  if (!token) return "∅";
  return token.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
}

/** Labels made unique (repeats get trailing zero-width spaces), so a categorical axis keeps them apart. */
export function unique(labels) {
  const seen = new Map();
  return labels.map((text) => {
    const n = seen.get(text) || 0;
    seen.set(text, n + 1);
    return text + "\u200b".repeat(n);
  });
}

/** Tokens as an axis shows them: escaped, cut to MAX_LABEL characters, kept apart. */
export function axisLabels(tokens) {
  const cut = (t) => ([...t].length <= MAX_LABEL ? t : [...t].slice(0, MAX_LABEL - 1).join("") + "…");
  return unique(tokens.map((t) => escapeToken(cut(t))));
}

/** Pixels an axis needs for the longest of `labels`. */
export function labelPx(labels, perChar = 6.5) {
  const longest = Math.max(1, ...labels.map((l) => [...l.replace(/\u200b+$/, "")].length));
  return Math.floor(perChar * longest) + 14;
}

/** `text` (plain, not yet escaped) broken at spaces into lines of at most `chars` characters, escaped and joined with
 * plotly's <br>: plotly's titles and annotations never wrap themselves, and are cut at the figure's edge. */
export function wrapped(text, chars) {
  const lines = [];
  for (const word of String(text).split(/\s+/).filter(Boolean)) {
    const last = lines.length - 1;
    if (last >= 0 && [...lines[last]].length + 1 + [...word].length <= chars) lines[last] += " " + word;
    else lines.push(word);
  }
  return lines.map(escapeToken);
}
