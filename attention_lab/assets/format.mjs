// Numbers and texts written as the server's Python writes them, for the messages the page makes itself
// (assets/here.mjs): format's fixed point ("{x:.2f}", "{x:.0%}") and round(x, n), each rounded from the number's
// exact binary value with ties to even (JavaScript's toFixed takes the larger of two equally near: 0.125 is "0.13"
// to it, "0.12" to Python), and str.format's fields in a template the server wrote (Feature.texts).

const NEAR_TIE = 1e-6; // a value this near halfway between two outputs is looked at exactly

/** `x` in fixed point with `digits` decimals, as Python's format(x, f".{digits}f"). */
export function pyFixed(x, digits) {
  if (!Number.isFinite(x)) return Number.isNaN(x) ? "nan" : x > 0 ? "inf" : "-inf";
  const text = x.toFixed(digits), scaled = Math.abs(x) * 10 ** digits;
  if (Math.abs(scaled - Math.floor(scaled) - 0.5) > NEAR_TIE) return text;
  const exact = Math.abs(x).toFixed(100), dot = exact.indexOf("."); // every digit of a double this size
  if (!/^50*$/.test(exact.slice(dot + 1 + digits))) return text; // not halfway: toFixed rounds as Python does
  const down = exact.slice(0, digits ? dot + 1 + digits : dot); // halfway: the even one of the two
  return Number(down.at(-1)) % 2 ? text : (x < 0 ? "-" : "") + down;
}

/** Python's round(x, digits) of a finite `x`. */
export function pyRound(x, digits) {
  return Number(pyFixed(x, digits));
}

/** `template` with its fields filled from `values`, as Python's template.format(**values) fills them: {name},
 * {name:.2f}, {name:.0%} (a value without a format is written as String writes it: an int or a string, never a
 * float, whose text differs from Python's), and {{ and }} for braces. */
export function pyFormat(template, values) {
  return template.replace(/\{\{|\}\}|\{(\w+)(?::([^{}]*))?\}/g, (field, name, spec) => {
    if (!name) return field[0];
    const value = values[name];
    if (value === undefined) throw new Error(`no value for {${name}} in "${template}"`);
    if (!spec) return String(value);
    const found = /^\.(\d+)([f%])$/.exec(spec);
    if (!found) throw new Error(`{${name}:${spec}}: the page writes only .Nf and .N% formats`);
    return found[2] === "f" ? pyFixed(value, Number(found[1])) : `${pyFixed(value * 100, Number(found[1]))}%`;
  });
}
