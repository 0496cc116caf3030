// Tokens as the views label and merge them, for a page that decodes by itself: what attention_lab/core/units.py
// and payload.py work out on the server (a piece's label, the word it belongs to, whether it is special), written
// again here because the live page has no server. tests/js/live.test.mjs checks them against the server's on
// a thousand sentences; the rules are units.py's (see there).

const WORD_BOUNDARY = "\u2581"; // "▁"
const SPACE = "␣";
const PUNCTUATION = /^[\p{P}\p{S}]+$/u; // every character a punctuation mark or a symbol (Unicode's P and S)

export function isPunctuation(piece) {
  return !!piece && PUNCTUATION.test(piece);
}

export function startsWord(piece, previous = "", characterLevel = false) {
  return characterLevel || piece.startsWith(WORD_BOUNDARY) || isPunctuation(piece) || isPunctuation(previous);
}

/** The indices of `pieces` grouped into words; a special piece is a word of its own. */
export function wordGroups(pieces, special, characterLevel = false) {
  const groups = [];
  pieces.forEach((piece, i) => {
    const alone = special[i] || (i > 0 && special[i - 1]);
    if (!groups.length || alone || startsWord(piece, pieces[i - 1] ?? "", characterLevel)) groups.push([i]);
    else groups.at(-1).push(i);
  });
  return groups;
}

// Python's str.strip() removes what str.isspace() calls white space, which is not JavaScript's trim(): the
// information separators U+001C–U+001F and U+0085 are, U+FEFF is not (a byte-level piece can be any of them)
const PY_SPACE = "[\\t-\\r\\x1c-\\x20\\x85\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000]";
const EDGES = new RegExp(`^${PY_SPACE}+|${PY_SPACE}+$`, "g");
const strip = (text) => text.replaceAll(WORD_BOUNDARY, " ").replace(EDGES, "");

export function pieceLabel(piece, first, special = false) {
  if (special) return piece;
  const text = [...piece].some((c) => c !== WORD_BOUNDARY) ? strip(piece) : "";
  if (!text) return SPACE;
  return first ? text : "##" + text;
}

export function wordLabel(pieces) {
  if (pieces.length === 1) return pieceLabel(pieces[0], true);
  return strip(pieces.join("")) || SPACE;
}

/** Pieces as the server's Tokens record gives them: labels, words (as far as each piece), group, special. */
export function labelledPieces(pieces, special, characterLevel = false) {
  const labels = [], words = [], group = [];
  wordGroups(pieces, special, characterLevel).forEach((members, g) => {
    members.forEach((i, k) => {
      labels.push(pieceLabel(pieces[i], k === 0, special[i]));
      words.push(special[i] ? pieces[i] : wordLabel(members.slice(0, k + 1).map((j) => pieces[j])));
      group.push(g);
    });
  });
  return {labels, words, group, special: [...special]};
}

/** A target token as a label (a candidate, a step's token). */
export function tokenLabel(piece, special, characterLevel = false) {
  return pieceLabel(piece, startsWord(piece, "", characterLevel), special);
}
