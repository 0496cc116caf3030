// A model decoding in the page, with ONNX Runtime Web: the two graphs attention_lab/page_copy/graphs.py exports (the
// encoder, and one decoder step with the KV cache as inputs and outputs), the tokenizer from its tokenizer.json
// (@huggingface/tokenizers), and greedy decoding step by step with back and what-if, as the library's
// DecodingSession does it, under the model's own rules for each step (a token forced first, eos held back or forced
// at the limit: transformer.contract.NextTokenRules). The runtime and the tokenizer library are handed in (the page loads them from
// the file itself, the Node tests from the package), so this module runs the same in both.

import {tokenLabel} from "./pieces.mjs";
import {created} from "./session.mjs";

export const BLANK = /^[\s\p{Cc}\p{Cf}\p{Z}]*$/u; // only white space, control or format characters (checks.is_blank)
const ALNUM = /^[\p{L}\p{N}]$/u;
const MARKS = /[\uFDD0-\uFDD2]/g;

/** Input the page cannot use, with a message for the person who typed it (the app's own messages). */
export class InputError extends Error {}

/** The copy's file of the explanations' graph `name`: gzipped (attention_lab/page_copy/analyses.py graph_file). */
export const graphFile = (name) => `${name}.onnx.gz`;

/** The bytes that the gzipped bytes `packed` hold, by the runtime's own DecompressionStream (the browser's, Node's);
 * bytes that are not gzip's as they are (a host that sent the file with Content-Encoding: gzip, which the browser
 * undid). */
export async function gunzipped(packed) {
  if (packed[0] !== 0x1f || packed[1] !== 0x8b) return packed;
  const stream = new Blob([packed]).stream().pipeThrough(new DecompressionStream("gzip"));
  return new Uint8Array(await new Response(stream).arrayBuffer());
}

export class LiveModel {
  /** `parts`: the graphs' bytes (encoder, decoder) and their weights (Uint8Array each), the tokenizer's JSON, and
   * `config` (what export wrote: the model's sizes, ids, limits, alphabet and character names). */
  static async load(ort, Tokenizer, {encoder, decoder, weights, tokenizer, config}) {
    const options = {
      executionProviders: ["wasm"],
      graphOptimizationLevel: "all",
      externalData: [{path: "weights.bin", data: weights}],
    };
    const sessions = [await created(ort, encoder, options), await created(ort, decoder, options)];
    const model = new LiveModel(ort, sessions, new Tokenizer(tokenizer, {}), config);
    model.options = options;
    return model;
  }

  /** Load the explanations' graphs (attention_lab/page_copy/analyses.py): `graphs`, their files' bytes (graphFile:
   * gzipped) by name (they read the copy's weights). Each graph is gunzipped and its session made as a tab first runs
   * it: a tab that is never opened costs nothing (made at once, the five took seconds of the page's thread after
   * every load). */
  loadAnalyses(graphs) {
    const sessions = new Map();
    const session = (name) => {
      if (!sessions.has(name)) {
        const made = gunzipped(graphs[name]).then((graph) => created(this.ort, graph, this.options));
        sessions.set(name, made);
      }
      return sessions.get(name);
    };
    this.analyses = Object.fromEntries(Object.keys(graphs).map((name) => [name, () => session(name)]));
    this.analysisBytes = (name) => (graphs[name] ? gunzipped(graphs[name]) : null); // a second thread's (helper.mjs)
    return this;
  }

  /** A file of the copy beside its graphs (one its config lists in "files"), as bytes: read by `this.files(name)`
   * where its loader gave that (Node), else fetched from the copy's folder (`this.folder`, as the page's road sets it). */
  async file(name) {
    if (this.files) return this.files(name);
    const answer = await fetch(new URL(this.folder + name, document.baseURI));
    if (!answer.ok) throw new Error(`${name}: ${answer.status} ${answer.statusText}`);
    return new Uint8Array(await answer.arrayBuffer());
  }

  /** The explanations' graph `name` run on `inputs` (Tensors by name): each output by name as {data, dims}. */
  async explain(name, inputs) {
    const graph = this.analyses?.[name];
    if (!graph) throw new Error(`the explanations' graph ${name} is not loaded`);
    const out = await this.run(await graph(), inputs);
    return Object.fromEntries(Object.entries(out).map(([key, t]) => [key, {data: t.data, dims: t.dims}]));
  }

  /** An int64 tensor of `values` in the shape `dims`. */
  int64(values, dims) {
    return new this.ort.Tensor("int64", BigInt64Array.from(values, BigInt), dims);
  }

  /** The readings' graph (page_copy/readings.py: ALTI+, log p, cross-attention) over the source `ids` and the `tokens` written, with
   * the heads `ablated` ([kind, layer, head], 0-based) switched off. */
  async read(ids, tokens, ablated = []) {
    const keep = this.keep(ablated);
    return this.explain("readings", {source: this.int64(ids, [1, ids.length]), tokens: this.int64(tokens, [tokens.length]),
      keep_encoder: keep.encoder, keep_self: keep.decoder_self, keep_cross: keep.cross});
  }

  constructor(ort, [encoder, decoder], tokenizer, config) {
    Object.assign(this, {ort, encoder, decoder, tokenizer, config});
    this.special = new Set(config.special_ids ?? [config.pad_id, config.bos_id, config.eos_id]);
    this.pieces = new Map(); // id -> the piece shown
    this.queue = Promise.resolve(); // the runs asked for (`run`)
  }

  /** The piece of `id` for display, as the server shows it. Ours: the vocabulary's piece. A transformers model's
   * (adapters/hf/tokenizer.py TransformersTokenizer.id_to_token): a word's first piece starts with "▁" (byte-level
   * BPE's "Ġ" too) and bytes are shown as the text they decode to; without the marks a converted sentencepiece
   * tokenizer puts on entries that text alone never reaches (U+FDD0–U+FDD2: adapters/hf/page_tokenizer.py). */
  piece(id) {
    if (this.pieces.has(id)) return this.pieces.get(id);
    const raw = (this.tokenizer.id_to_token(id) ?? "<unk>").replace(MARKS, "");
    let piece = raw;
    if (this.config.marks_source && !this.special.has(id) && !raw.startsWith("▁")) {
      const text = this.tokenizer.decode([id], {skip_special_tokens: false, clean_up_tokenization_spaces: false});
      piece = text.startsWith(" ") ? "▁" + text.slice(1) : text || raw;
    }
    this.pieces.set(id, piece);
    return piece;
  }

  label(id) {
    return tokenLabel(this.piece(id), this.special.has(id), this.config.character_level);
  }

  /** Ids of `text` as the library's tokenizer gives them, without the markers a source gets (`marked`: with them):
   * the tokenizer library leaves a word-level vocabulary's unknown character as null, where the library writes
   * <unk>. */
  ids(text, marked = false) {
    return this.tokenizer.encode(text, {add_special_tokens: marked}).ids.map((id) => id ?? this.config.unk_id);
  }

  /** Characters of `text` the model reads as <unk>, in order of first appearance. */
  unknown(text) {
    const found = [];
    for (const char of text) {
      if (!found.includes(char) && this.ids(char).includes(this.config.unk_id)) found.push(char);
    }
    return found;
  }

  /** The source ids for `text` (the end token last, cut to what the model reads) and a notice; raises InputError
   * with the app's message (attention_lab/checks.py) for a source it cannot use. */
  source(text) {
    if (text == null || BLANK.test(text)) throw new InputError("Type a source text first: it is empty.");
    const unknown = this.unknown(text);
    let notice = "";
    if (unknown.length) {
      const names = unknown.slice(0, 10).map((c) => this.describe(c)).join(", ") + (unknown.length > 10 ? " …" : "");
      if (this.config.alphabet) throw new InputError(`This model only knows ${this.config.alphabet}; remove ${names}.`);
      notice = `Not in the vocabulary (read as <unk>): ${names}. `;
    }
    // a transformers model's tokenizer.json marks a source itself (eos, BART's <s>, a language code); ours ends it here
    const full = this.config.marks_source ? this.ids(text, true) : [...this.ids(text), this.config.eos_id];
    const ids = full.length > this.config.max_len ? [...full.slice(0, this.config.max_len - 1), this.config.eos_id]
      : full;
    if (ids.length < full.length) notice += `The source was ${full.length} tokens; only the first ${ids.length - 1} are used.`;
    return {ids, notice: notice.trim()};
  }

  /** A warning when the source (its ids, the end token last) is longer than anything the model saw in training, ""
   * otherwise (models.registry.ModelEntry.length_notice). */
  lengthNotice(ids) {
    const n = ids.length - 1, longest = this.config.trained_length;
    if (!longest || n <= longest) return "";
    const unit = this.config.character_level ? "characters" : "tokens";
    return `This source is ${n} ${unit}, longer than any the model saw in training (up to ${longest}): expect the output to degrade.`;
  }

  /** A character named so that any reader can tell what it is (checks.describe_char): its Unicode name comes from
   * the table export wrote, which holds the characters a keyboard types; any other is named by its code. */
  describe(char) {
    const code = "U+" + char.codePointAt(0).toString(16).toUpperCase().padStart(4, "0");
    const name = this.config.names[char] ?? ideograph(char, this.config.ideographs);
    if (!name) return code;
    return ALNUM.test(char) ? `'${char}' (${name})` : `${name} (${code})`;
  }

  /** A decoding of `ids` to step through (see LiveSession), with `topK` candidates kept at each step and at most
   * `maxNew` tokens (the model's own limit by default), with the heads `ablated` ([kind, layer, head], 0-based, as
   * transformer.Head) switched off throughout. */
  async start(ids, topK = 5, maxNew = null, ablated = []) {
    const source = new this.ort.Tensor("int64", BigInt64Array.from(ids, BigInt), [1, ids.length]);
    const keep = this.keep(ablated);
    const out = await this.run(this.encoder, {source, keep_encoder: keep.encoder});
    return new LiveSession(this, ids, out, topK, maxNew, keep);
  }

  /** The graphs' head masks for `ablated`: per kind, (layers, heads) of 1 (kept) or 0 (ablated). */
  keep(ablated) {
    const c = this.config, H = c.n_heads;
    const mask = (L) => new Float32Array(L * H).fill(1);
    const keep = {encoder: mask(c.n_encoder_layers), decoder_self: mask(c.n_decoder_layers), cross: mask(c.n_decoder_layers)};
    for (const [kind, layer, head] of ablated) {
      if (!keep[kind] || layer < 0 || head < 0 || head >= H || layer * H + head >= keep[kind].length) {
        throw new InputError(`No such head: ${kind} layer ${layer + 1}, head ${head + 1}.`);
      }
      keep[kind][layer * H + head] = 0;
    }
    const tensor = (data) => new this.ort.Tensor("float32", data, [data.length / H, H]);
    return {encoder: tensor(keep.encoder), decoder_self: tensor(keep.decoder_self), cross: tensor(keep.cross)};
  }

  /** `graph` run on the `inputs` it reads, after every run asked for before (the runtime runs one at a time: a
   * decoding step and an explanation made ahead share it). */
  run(graph, inputs) {
    const done = this.queue.then(() => graph.run(this.fed(graph, inputs)));
    this.queue = done.catch(() => {});
    return done;
  }

  /** The `inputs` a graph reads (one exported before it took head masks has no keep_* inputs). */
  fed(graph, inputs) {
    return Object.fromEntries(graph.inputNames.map((name) => [name, inputs[name]]));
  }
}

/** One source's greedy decoding, a step at a time, with back and what-if (transformer.DecodingSession). */
export class LiveSession {
  constructor(model, ids, encoded, topK, maxNew = null, keep = null) {
    const c = model.config;
    this.model = model;
    this.keep = keep || model.keep([]);
    this.srcIds = ids;
    this.topK = Math.max(1, Math.min(topK, c.tgt_vocab_size));
    this.maxNew = Math.min(maxNew || Infinity, c.max_new_tokens); // never past the model's own limit (next_token.py)
    // what the views read of the encoder (a decoding from other keys and values than the encoder's has none)
    this.encoder = encoded.encoder?.data; // (Le, H, S, S)
    this.encoderNorms = encoded.encoder_norms?.data; // (Le, H, S)
    this.encoderRollout = encoded.encoder_rollout?.data; // (Le, S, S)
    this.crossNorms = encoded.cross_norms?.data; // (Ld, H, S)
    this.cross = {cross_k: encoded.cross_k, cross_v: encoded.cross_v};
    const K = c.head_dim ?? c.d_model / c.n_heads;
    const empty = new model.ort.Tensor("float32", new Float32Array(0), [c.n_decoder_layers, c.n_heads, 0, K]);
    this.caches = [{past_k: empty, past_v: empty}]; // caches[t]: what step t + 1 reads
    this.steps = [];
  }

  get tokens() {
    return this.steps.map((s) => s.token);
  }

  get finished() {
    const n = this.steps.length;
    return n > 0 && (this.steps[n - 1].token === this.model.config.eos_id || n >= this.maxNew);
  }

  /** Whether the model may write `token` at the step of index `index` (0-based: the step that follows `index`
   * tokens; the next one by default): never an id outside its vocabulary, nor what it never writes (pad, bos), nor
   * what its rules forbid there; a token forced there is written whatever else holds (DecodingSession.can_write). */
  canWrite(token, index = this.steps.length) {
    const c = this.model.config;
    if (!Number.isInteger(token) || token < 0 || token >= c.tgt_vocab_size) return false;
    const row = new Float32Array(c.tgt_vocab_size);
    for (const id of c.banned) row[id] = -Infinity; // as the graph gives the logits
    return Number.isFinite(this.ruled(row, index)[token]);
  }

  /** `logits` with what the model's rules forbid at the step of index `step` (0-based) at -inf
   * (NextTokenRules.apply; the graph already holds back what is never written): a copy, or `logits` itself when no
   * rule acts there. */
  ruled(logits, step) {
    const rules = this.model.config.rules;
    if (!rules) return logits;
    const limit = this.maxNew;
    let forced = step === 0 ? rules.forced_first : null;
    if (step === limit - 1 && rules.forced_last != null) forced = rules.forced_last;
    const held = [...(step === 0 ? rules.begin_banned : []), ...(step + 1 < rules.min_length ? rules.eos_ids : [])];
    if (forced == null && !held.length) return logits;
    const out = Float32Array.from(logits);
    if (forced != null) { // what is forced is written whatever else holds (as NextTokenRules.apply)
      out.fill(-Infinity);
      out[forced] = 0;
    } else for (const id of held) out[id] = -Infinity;
    return out;
  }

  /** Decode one token: the argmax, or `force` (what if the model had written it?). */
  async step(force = null) {
    if (this.finished) throw new InputError("Decoding has finished: step back or reset first.");
    if (force != null && !this.canWrite(force, this.steps.length)) {
      throw new InputError(`The model never writes token ${force} at step ${this.steps.length + 1}.`);
    }
    const c = this.model.config;
    const out = await this.decode(this.steps.length ? this.steps.at(-1).token : c.bos_id, this.caches.at(-1));
    const probs = softmax(this.ruled(out.logits.data, this.steps.length));
    const top = topK(probs, this.topK);
    const chosen = force ?? top[0];
    const step = {
      token: chosen,
      forced: force != null && force !== top[0],
      prob: probs[chosen],
      topIds: top,
      topProbs: top.map((i) => probs[i]),
      self: out.self.data, // (Ld, H, t + 1)
      cross: out.cross.data, // (Ld, H, S)
      selfNorms: out.self_norms.data, // (Ld, H)
    };
    // its row of the decoder's rollout, which goes with the step (Back drops it, a what-if makes its own)
    step.rollout = rolloutRow(step.self, this.steps.map((s) => s.rollout), c.n_decoder_layers, c.n_heads);
    this.caches.push({past_k: out.next_k, past_v: out.next_v});
    this.steps.push(step);
    return step;
  }

  /** The decoder's step after the token `previous`, reading `cache` ({past_k, past_v}): the graph's outputs. */
  decode(previous, cache) {
    const m = this.model;
    const token = new m.ort.Tensor("int64", BigInt64Array.of(BigInt(previous)), [1, 1]);
    const inputs = {token, ...cache, ...this.cross, keep_self: this.keep.decoder_self, keep_cross: this.keep.cross};
    return m.run(m.decoder, inputs);
  }

  /** The token the next greedy step would write (null when finished), the decoding left as it is. */
  async peek() {
    if (this.finished) return null;
    const out = await this.decode(this.steps.length ? this.steps.at(-1).token : this.model.config.bos_id, this.caches.at(-1));
    return topK(softmax(this.ruled(out.logits.data, this.steps.length)), 1)[0];
  }

  back() {
    if (!this.steps.length) return;
    this.steps.pop();
    this.caches.pop();
  }

  reset() {
    while (this.steps.length) this.back();
  }

  async run() {
    while (!this.finished) await this.step();
    return this.tokens;
  }
}

/** The decoder self-attention's rollout row of step t (per layer, t + 1 shares) from this step's weights `self`
 * (Ld, H, t + 1) and the rows of the steps before it (`rows`: per step, per layer): transformer.readings.rollout, a
 * row at a time (the attention is causal, so a step adds one row and changes none). */
export function rolloutRow(self, rows, Ld, H) {
  const t = rows.length, n = t + 1;
  const row = [];
  for (let l = 0; l < Ld; l++) {
    const a = new Float64Array(n);
    for (let h = 0; h < H; h++) for (let j = 0; j < n; j++) a[j] += self[(l * H + h) * n + j] / H;
    for (let j = 0; j < n; j++) a[j] = 0.5 * a[j] + (j === t ? 0.5 : 0);
    const sum = a.reduce((x, y) => x + y, 0);
    for (let j = 0; j < n; j++) a[j] /= sum;
    if (l === 0) row.push(a);
    else {
      const rolled = new Float64Array(n);
      for (let j = 0; j < n; j++) {
        const below = j === t ? row[l - 1] : rows[j][l - 1];
        for (let k = 0; k < below.length; k++) rolled[k] += a[j] * below[k];
      }
      row.push(rolled);
    }
  }
  return row;
}

/** Probabilities from logits (what the model may not write is -inf: 0), in float32 as torch's softmax. */
function softmax(logits) {
  let max = -Infinity;
  for (const x of logits) if (x > max) max = x;
  const out = new Float32Array(logits.length);
  let sum = 0;
  for (let i = 0; i < logits.length; i++) sum += out[i] = Math.exp(logits[i] - max);
  for (let i = 0; i < out.length; i++) out[i] /= sum;
  return out;
}

/** The ids of the k largest values, largest first (the lower id first among equals). */
function topK(values, k) {
  const best = [];
  for (let i = 0; i < values.length; i++) {
    if (best.length < k || values[i] > values[best.at(-1)]) {
      let at = best.length;
      while (at > 0 && values[i] > values[best[at - 1]]) at--;
      best.splice(at, 0, i);
      if (best.length > k) best.pop();
    }
  }
  return best;
}

/** A CJK ideograph's name, by Unicode's rule for the ranges export found ("cjk unified ideograph-4e00"), or null. */
function ideograph(char, ranges) {
  const code = char.codePointAt(0);
  if (!ranges.some(([a, b]) => code >= a && code <= b)) return null;
  return "cjk unified ideograph-" + code.toString(16).padStart(4, "0");
}

/** (T, V) as a tensor: the rules of each step of a decoding of at most `limit` steps, 0 or -inf (the page's own,
 * LiveSession.ruled, as decoding applies them), which an explanations' graph adds to its logits. */
export function stepRules(model, T, limit) {
  const V = model.config.tgt_vocab_size, mask = new Float32Array(T * V), zero = new Float32Array(V);
  const session = {model, maxNew: limit}; // what ruled reads of a session
  for (let t = 0; t < T; t++) {
    const row = LiveSession.prototype.ruled.call(session, zero, t);
    if (row !== zero) mask.set(row, t * V);
  }
  return new model.ort.Tensor("float32", mask, [T, V]);
}
