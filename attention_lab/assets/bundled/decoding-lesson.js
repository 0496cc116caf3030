var lab = (() => {
  var __defProp = Object.defineProperty;
  var __getOwnPropDesc = Object.getOwnPropertyDescriptor;
  var __getOwnPropNames = Object.getOwnPropertyNames;
  var __hasOwnProp = Object.prototype.hasOwnProperty;
  var __export = (target, all) => {
    for (var name in all)
      __defProp(target, name, { get: all[name], enumerable: true });
  };
  var __copyProps = (to, from, except, desc) => {
    if (from && typeof from === "object" || typeof from === "function") {
      for (let key of __getOwnPropNames(from))
        if (!__hasOwnProp.call(to, key) && key !== except)
          __defProp(to, key, { get: () => from[key], enumerable: !(desc = __getOwnPropDesc(from, key)) || desc.enumerable });
    }
    return to;
  };
  var __toCommonJS = (mod) => __copyProps(__defProp({}, "__esModule", { value: true }), mod);

  // attention_lab/decoding/lesson.mjs
  var lesson_exports = {};
  __export(lesson_exports, {
    PARTS: () => PARTS,
    start: () => start
  });

  // attention_lab/assets/dom.mjs
  function el(tag, className = "", text = null) {
    const node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== null && text !== void 0) node.textContent = String(text);
    return node;
  }
  function root(element) {
    return element.querySelector(".lab-drawn") || element;
  }
  var TAB = "#lab-tabs button[role=tab]";
  function openTab(id) {
    document.querySelector(`${TAB}[data-tab-id="${id}"]`)?.click();
  }
  function placeOf(node, fn) {
    const place = { visible: false, width: 0, top: 0 };
    new ResizeObserver(() => {
      const width = node.clientWidth, again = width !== place.width && width > 0;
      Object.assign(place, {
        visible: width > 0 && node.offsetParent !== null,
        width,
        top: width > 0 ? node.getBoundingClientRect().top + globalThis.scrollY : 0
      });
      if (again) fn();
    }).observe(node);
    return place;
  }
  function labelled(text, control, className = "") {
    const label = el("label", className);
    label.append(el("span", "lab-control-name", text), control);
    return label;
  }
  function select(options, value) {
    const s = el("select");
    for (const [key, text] of options) {
      const o = el("option", "", text);
      o.value = key;
      s.appendChild(o);
    }
    s.value = value;
    return s;
  }

  // attention_lab/assets/look.mjs
  var LOG_FLOOR = 1e-4;
  var BLUES = ["#f7fbff", "#deebf7", "#c6dbef", "#9ecae1", "#6baed6", "#4292c6", "#2171b5", "#08519c", "#08306b"];
  var STYLE = {
    colorscale: BLUES.map((colour, i) => [i / (BLUES.length - 1), colour]),
    highlight: "#e4572e",
    // the current step, everywhere
    focusLine: "#222222"
    // the focused head's tile in the grid
  };
  function focusLabel(layer, head2) {
    return `Layer ${layer + 1} · Head ${head2 + 1}`;
  }
  function focusOf(label) {
    const found = /^Layer (\d+) · Head (\d+)$/.exec(String(label || ""));
    return found && +found[1] > 0 && +found[2] > 0 ? [+found[1] - 1, +found[2] - 1] : null;
  }
  function focusChoices(layers, heads, mean) {
    const out = [mean];
    for (let l = 0; l < layers; l++) for (let h = 0; h < heads; h++) out.push(focusLabel(l, h));
    return out;
  }
  function percent(p) {
    if (p >= 0.1) return `${Math.round(100 * p)}%`;
    if (p >= 1e-4) return `${Number((100 * p).toPrecision(2))}%`;
    return "<0.01%";
  }

  // attention_lab/assets/decoding.mjs
  var SCALE = 65535;
  function base64Bytes(b64) {
    const text = atob(b64);
    const out = new Uint8Array(text.length);
    for (let i = 0; i < text.length; i++) out[i] = text.charCodeAt(i);
    return out;
  }
  function weights16(b64) {
    const raw = base64Bytes(b64);
    const out = new Float32Array(raw.length / 2);
    for (let i = 0; i < out.length; i++) out[i] = (raw[2 * i] | raw[2 * i + 1] << 8) / SCALE;
    return out;
  }
  function floats32(b64) {
    const raw = base64Bytes(b64);
    const view = new DataView(raw.buffer);
    const out = new Float32Array(raw.length / 4);
    for (let i = 0; i < out.length; i++) out[i] = view.getFloat32(4 * i, true);
    return out;
  }
  function decodeStep(step) {
    return {
      ...step,
      cross: weights16(step.cross),
      self: weights16(step.self),
      selfNorms: step.self_norms ? floats32(step.self_norms) : null,
      selfRollout: weights16(step.self_rollout)
    };
  }
  var SEQUENCE = ["labels", "words", "group", "special"];
  var Decoding = class _Decoding {
    /** `data` is payload.full's; steps come and go with the messages. */
    constructor(data) {
      this.model = data.model;
      [this.Le, this.Ld] = data.layers;
      this.H = data.heads;
      this.characterLevel = data.character_level;
      this.bos = data.bos;
      this.src = data.src;
      this.out = Object.fromEntries(SEQUENCE.map((name) => [name, [...data.out[name]]]));
      this.S = data.src.labels.length;
      this.encoder = weights16(data.encoder);
      this.encoderNorms = data.encoder_norms ? floats32(data.encoder_norms) : null;
      this.encoderRollout = weights16(data.encoder_rollout);
      this.crossNorms = data.cross_norms ? floats32(data.cross_norms) : null;
      this.steps = data.steps.map(decodeStep);
      this.revision = 0;
      this.memo = /* @__PURE__ */ new Map();
      this.interventions = Boolean(data.interventions);
      this.original = null;
      if (data.original) {
        const o = data.original;
        this.original = { out: o.out, at: o.at, steps: o.cross.map((c) => ({ cross: weights16(c) })) };
      }
    }
    addStep(delta) {
      this.revision++;
      this.steps.push(decodeStep(delta.step));
      for (const name of SEQUENCE) this.out[name].push(delta.out[name]);
      if (delta.cross_norms) this.crossNorms = floats32(delta.cross_norms);
    }
    keep(n) {
      this.revision++;
      this.steps.length = n;
      for (const name of SEQUENCE) this.out[name].length = n;
    }
    /** What `make()` gives, worked out once per `key` (the last one kept for each `name`): another focus or colour
     * scale redraws from the weights it already has. */
    remembered(name, key, make) {
      const known = this.memo.get(name);
      if (known && known.key === key && known.revision === this.revision) return known.value;
      const value = make();
      this.memo.set(name, { key, revision: this.revision, value });
      return value;
    }
    /** The decoder's inputs: the start token, then every output but the last (a special token, a word alone). */
    inputs() {
      return {
        labels: [this.bos, ...this.out.labels],
        words: [this.bos, ...this.out.words],
        group: [-1, ...this.out.group],
        special: [true, ...this.out.special]
      };
    }
    /** Piece-level weights of `kind` at step `shown` (1-based), (L, H, Q, K), and the norms of its keys (L, H, K). */
    pieces(kind, shown) {
      const { H, S } = this;
      if (kind === "encoder") return { L: this.Le, H, Q: S, K: S, data: this.encoder, norms: this.encoderNorms };
      const L = this.Ld;
      if (kind === "cross") {
        const data2 = new Float32Array(L * H * shown * S);
        for (let q = 0; q < shown; q++) {
          const row = this.steps[q].cross;
          for (let lh = 0; lh < L * H; lh++) data2.set(row.subarray(lh * S, (lh + 1) * S), (lh * shown + q) * S);
        }
        return { L, H, Q: shown, K: S, data: data2, norms: this.crossNorms };
      }
      const data = new Float32Array(L * H * shown * shown);
      const known = shown > 0 && this.steps[0].selfNorms !== null;
      const norms = known ? new Float32Array(L * H * shown) : null;
      for (let q = 0; q < shown; q++) {
        const step = this.steps[q];
        for (let lh = 0; lh < L * H; lh++) {
          data.set(step.self.subarray(lh * (q + 1), (lh + 1) * (q + 1)), (lh * shown + q) * shown);
          if (known) norms[lh * shown + q] = step.selfNorms[lh];
        }
      }
      return { L, H, Q: shown, K: shown, data, norms };
    }
    /** Rollout of a self-attention kind through each layer, (L, 1, Q, K). */
    rollout(kind, shown) {
      if (kind === "encoder") return { L: this.Le, H: 1, Q: this.S, K: this.S, data: this.encoderRollout };
      const L = this.Ld;
      const data = new Float32Array(L * shown * shown);
      for (let q = 0; q < shown; q++) {
        const row = this.steps[q].selfRollout;
        for (let l = 0; l < L; l++) data.set(row.subarray(l * (q + 1), (l + 1) * (q + 1)), (l * shown + q) * shown);
      }
      return { L, H: 1, Q: shown, K: shown, data };
    }
    /** The decoding before a what-if, ablation or edit, as a Decoding of its own (cross-attention only). */
    before() {
      if (!this.original) return null;
      const before = Object.create(_Decoding.prototype);
      return Object.assign(before, this, { out: this.original.out, steps: this.original.steps, memo: /* @__PURE__ */ new Map() });
    }
  };

  // attention_lab/assets/store.mjs
  var page = {
    decoding: null,
    key: null,
    // the decoding the page holds
    fullKey: null,
    // the last whole decoding received: what followed it was only steps more or fewer
    shown: 0,
    // 0: before any output
    kind: "cross",
    look: { words: true, hideSpecials: false, scale: "linear", focus: null, reading: "weights" },
    names: null,
    // what the kinds, the readings, the scales and the mean of all heads are called (the server's Names)
    changes: 0
    // how many times the state changed (tests read it)
  };
  globalThis.attentionLab = page;
  var watchers = /* @__PURE__ */ new Set();
  function watch(fn, first = false) {
    if (first) {
      const others = [...watchers];
      watchers.clear();
      for (const f of [fn, ...others]) watchers.add(f);
    } else watchers.add(fn);
    return () => watchers.delete(fn);
  }
  function changed(what) {
    page.changes++;
    for (const fn of watchers) fn(what);
  }
  function steps() {
    return page.decoding ? page.decoding.steps.length : 0;
  }
  var waiting = /* @__PURE__ */ new Map();
  var WAITING_AT_MOST = 8;
  var slot = (key) => key ? `${key.serial} ${key.version}` : "";
  function sameKey(a, b) {
    return a === b || !!a && !!b && a.serial === b.serial && a.version === b.version;
  }
  function receive(message) {
    if (!message || !message.op) return;
    if (!apply(message)) {
      const follows = message.op === "step" || message.op === "back";
      if (follows && waiting.size < WAITING_AT_MOST) waiting.set(slot(message.after), message);
      return;
    }
    if (message.op === "full" || message.op === "clear") waiting.clear();
    for (let next = waiting.get(slot(page.key)); next; next = waiting.get(slot(page.key))) {
      waiting.delete(slot(page.key));
      apply(next);
    }
  }
  function apply(message) {
    const d = page.decoding;
    if (message.op === "full") page.decoding = new Decoding(message.data);
    else if (message.op === "clear") page.decoding = null;
    else if (message.op === "step" && d && sameKey(page.key, message.after)) d.addStep(message);
    else if (message.op === "back" && d && sameKey(page.key, message.after)) d.keep(message.steps);
    else if (message.op !== "show" || !sameKey(page.key, message.key)) return false;
    if (message.op === "full" || message.op === "clear") page.fullKey = message.key;
    page.key = message.key;
    const same = message.op === "show";
    if (same && page.shown === message.shown) return true;
    page.shown = message.shown;
    changed(same ? "shown" : "decoding");
    return true;
  }
  function show(step) {
    const wanted = Math.max(0, Math.min(Number(step) || 0, steps()));
    if (wanted === page.shown) return;
    page.shown = wanted;
    changed("shown");
  }
  function setNames(names) {
    if (!names || names.op !== "names") return;
    page.names = names;
    changed("names");
  }
  function setKind(kind) {
    if (!page.names || !page.names.order.includes(kind) || kind === page.kind) return;
    page.kind = kind;
    changed("kind");
  }
  function setLook(partial) {
    if (Object.entries(partial).every(([name, value]) => JSON.stringify(page.look[name]) === JSON.stringify(value))) return;
    Object.assign(page.look, partial);
    changed("look");
  }

  // attention_lab/decoding/candidates.mjs
  var LABEL = "Next-token probabilities. What if? Click another candidate to force it here and decode on";
  var WHY_NOT = "why not this?";
  var WHY_NOT_EVENT = "attention-lab-why-not";
  var WHAT_IF_EVENT = "attention-lab-what-if";
  function renderCandidates(container, decoding, shown) {
    const list = el("div", "candidates");
    container.replaceChildren(list);
    if (!shown) return;
    const step = decoding.steps[shown - 1];
    for (const [label, id, prob] of step.top) {
      const taken = id === step.token;
      const row = el("button", "candidate" + (taken ? " taken" : ""));
      row.type = "button";
      row.dataset.token = String(id);
      const bar = el("span", "bar");
      bar.style.setProperty("--share", prob.toFixed(3));
      row.append(bar, el("span", "label", label), el("span", "value", percent(prob)));
      const why = el(taken ? "span" : "button", "why-not" + (taken ? " none" : ""), WHY_NOT);
      if (taken) why.setAttribute("aria-hidden", "true");
      else {
        why.type = "button";
        why.dataset.alternative = String(id);
        why.title = `Why ${step.label} and not ${label}? (the Why tab)`;
      }
      const line = el("div", "candidate-row");
      line.append(row, why);
      list.appendChild(line);
    }
  }
  function mount({ element, trigger }) {
    const box = root(element);
    const body = el("div", "lab-candidates");
    box.replaceChildren(el("div", "lab-label", LABEL), body);
    const draw2 = () => page.decoding ? renderCandidates(body, page.decoding, page.shown) : body.replaceChildren();
    box.addEventListener("click", (event) => {
      const why = event.target.closest(".why-not[data-alternative]");
      if (why) {
        const token = Number(why.dataset.alternative);
        trigger("click", { alternative: token, shown: page.shown });
        document.dispatchEvent(new CustomEvent(WHY_NOT_EVENT, { detail: { step: page.shown, token } }));
        openTab("why");
        return;
      }
      const candidate = event.target.closest(".candidate[data-token]");
      if (candidate && !candidate.classList.contains("taken")) {
        const detail = { token: Number(candidate.dataset.token), shown: page.shown };
        if (document.dispatchEvent(new CustomEvent(WHAT_IF_EVENT, { detail, cancelable: true }))) trigger("select", detail);
      }
    });
    watch((what) => what === "decoding" || what === "shown" ? draw2() : null);
    draw2();
  }

  // attention_lab/assets/units.mjs
  function units(seq, n, words) {
    const out = { labels: [], groups: [], special: [] };
    for (let i = 0; i < n; i++) {
      const joins = words && i > 0 && seq.group[i] === seq.group[i - 1] && seq.group[i] >= 0;
      if (joins) {
        out.groups[out.groups.length - 1].push(i);
        out.labels[out.labels.length - 1] = seq.words[i];
      } else {
        out.groups.push([i]);
        out.labels.push(words ? seq.words[i] : seq.labels[i]);
        out.special.push(seq.special[i]);
      }
    }
    return out;
  }
  function kept(u) {
    const keep = [];
    u.special.forEach((s, i) => {
      if (!s) keep.push(i);
    });
    return keep;
  }
  function inUnits(stack, rows, cols, hide) {
    const { L, H, Q, K, data } = stack;
    const rowIdx = hide ? kept(rows) : rows.groups.map((_, i) => i);
    const colIdx = hide ? kept(cols) : cols.groups.map((_, i) => i);
    const R = rowIdx.length, C = colIdx.length;
    const out = new Float32Array(L * H * R * C);
    for (let lh = 0; lh < L * H; lh++) {
      for (let r = 0; r < R; r++) {
        const group = rows.groups[rowIdx[r]];
        const base = (lh * R + r) * C;
        let total = 0;
        for (let c = 0; c < C; c++) {
          let sum = 0;
          for (const q of group) for (const k of cols.groups[colIdx[c]]) sum += data[(lh * Q + q) * K + k];
          out[base + c] = sum / group.length;
          total += out[base + c];
        }
        if (hide) for (let c = 0; c < C; c++) out[base + c] = total > 0 ? out[base + c] / total : 0;
      }
    }
    return { L, H, Q: R, K: C, data: out, rows: rowIdx, cols: colIdx };
  }
  function valueWeighted(stack, norms) {
    const { L, H, Q, K, data } = stack;
    const out = new Float32Array(data.length);
    for (let lh = 0; lh < L * H; lh++) {
      for (let q = 0; q < Q; q++) {
        let total = 0;
        const base = (lh * Q + q) * K;
        for (let k = 0; k < K; k++) total += out[base + k] = data[base + k] * norms[lh * K + k];
        for (let k = 0; k < K; k++) out[base + k] = total > 0 ? out[base + k] / total : 0;
      }
    }
    return { ...stack, data: out };
  }
  function through(stack, matrix) {
    const { L, H, Q, K, data } = stack;
    const out = new Float32Array(data.length);
    for (let row = 0; row < L * H * Q; row++) {
      for (let j = 0; j < K; j++) {
        let sum = 0;
        for (let k = 0; k < K; k++) sum += data[row * K + k] * matrix[k * K + j];
        out[row * K + j] = sum;
      }
    }
    return { ...stack, data: out };
  }
  function read(decoding, kind, shown, reading) {
    const pieces = decoding.pieces(kind, shown);
    if (reading === "value" && pieces.norms) return valueWeighted(pieces, pieces.norms);
    if (reading === "rollout") {
      if (kind === "cross") {
        const S = decoding.S, last = decoding.encoderRollout.subarray((decoding.Le - 1) * S * S, decoding.Le * S * S);
        return through(pieces, last);
      }
      return decoding.rollout(kind, shown);
    }
    return pieces;
  }
  function weights(decoding, kind, shown, look) {
    if (kind === "encoder") shown = 0;
    const key = [kind, shown, look.words, look.hideSpecials, look.reading].join("|");
    return decoding.remembered(`weights:${kind}`, key, () => ({ ...computeWeights(decoding, kind, shown, look), key }));
  }
  function computeWeights(decoding, kind, shown, look) {
    let rows, cols, rowPiece = null;
    if (kind === "encoder") {
      rows = cols = units(decoding.src, decoding.S, look.words);
    } else {
      rows = units(decoding.out, shown, look.words);
      cols = kind === "cross" ? units(decoding.src, decoding.S, look.words) : units(decoding.inputs(), shown, look.words);
      rowPiece = shown - 1;
    }
    const merged = inUnits(read(decoding, kind, shown, look.reading), rows, cols, look.hideSpecials);
    let current = rows.groups.findIndex((g) => g.includes(rowPiece));
    current = current < 0 ? null : current;
    if (look.hideSpecials) current = merged.rows.includes(current) ? merged.rows.indexOf(current) : null;
    const pick = (u, idx) => ({ labels: idx.map((i) => u.labels[i]), groups: idx.map((i) => u.groups[i]) });
    return { stack: merged, rows: pick(rows, merged.rows), cols: pick(cols, merged.cols), current };
  }
  function head(stack, focus, rolled) {
    const { L, H, Q, K, data } = stack;
    if (rolled) {
      const layer = focus ? Math.min(focus[0], L - 1) : L - 1;
      return { z: data.subarray(layer * Q * K, (layer + 1) * Q * K), Q, K, name: `rollout through layer ${layer + 1}` };
    }
    if (focus && focus[0] < L && focus[1] < H) {
      const lh = focus[0] * H + focus[1];
      return { z: data.subarray(lh * Q * K, (lh + 1) * Q * K), Q, K, name: `layer ${focus[0] + 1}, head ${focus[1] + 1}` };
    }
    const mean = new Float32Array(Q * K);
    for (let lh = 0; lh < L * H; lh++) for (let i = 0; i < Q * K; i++) mean[i] += data[lh * Q * K + i] / (L * H);
    return { z: mean, Q, K, name: "mean of all heads" };
  }
  function stepRow(decoding, kind, shown, look) {
    const cols = kind === "cross" ? units(decoding.src, decoding.S, look.words) : units(decoding.inputs(), shown, look.words);
    const one = { labels: ["·"], groups: [[0]], special: [false] };
    const all = read(decoding, kind, shown, look.reading);
    const { L, H, Q, K } = all, row = new Float32Array(L * H * K);
    for (let lh = 0; lh < L * H; lh++) row.set(all.data.subarray((lh * Q + shown - 1) * K, (lh * Q + shown) * K), lh * K);
    const merged = inUnits({ ...all, Q: 1, data: row }, one, cols, look.hideSpecials);
    return { stack: merged, labels: merged.cols.map((c) => cols.labels[c]), groups: merged.cols.map((c) => cols.groups[c]) };
  }
  function scaled(z, Q, K, scale) {
    const out = new Float32Array(Q * K);
    for (let q = 0; q < Q; q++) {
      let top = 0;
      if (scale === "row") for (let k = 0; k < K; k++) top = Math.max(top, z[q * K + k]);
      for (let k = 0; k < K; k++) {
        const w = z[q * K + k];
        out[q * K + k] = scale === "log" ? Math.log10(Math.max(w, LOG_FLOOR)) : scale === "row" ? top > 0 ? w / top : 0 : w;
      }
    }
    return out;
  }
  function unit(value, scale) {
    return scale === "log" ? (value - Math.log10(LOG_FLOOR)) / -Math.log10(LOG_FLOOR) : value;
  }

  // attention_lab/assets/labels.mjs
  var MAX_LABEL = 16;
  function escapeToken(token) {
    if (!token) return "∅";
    return token.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
  }
  function unique(labels) {
    const seen = /* @__PURE__ */ new Map();
    return labels.map((text) => {
      const n = seen.get(text) || 0;
      seen.set(text, n + 1);
      return text + "​".repeat(n);
    });
  }
  function axisLabels(tokens) {
    const cut = (t) => [...t].length <= MAX_LABEL ? t : [...t].slice(0, MAX_LABEL - 1).join("") + "…";
    return unique(tokens.map((t) => escapeToken(cut(t))));
  }
  function labelPx(labels, perChar = 6.5) {
    const longest = Math.max(1, ...labels.map((l) => [...l.replace(/\u200b+$/, "")].length));
    return Math.floor(perChar * longest) + 14;
  }
  function wrapped(text, chars) {
    const lines = [];
    for (const word of String(text).split(/\s+/).filter(Boolean)) {
      const last = lines.length - 1;
      if (last >= 0 && [...lines[last]].length + 1 + [...word].length <= chars) lines[last] += " " + word;
      else lines.push(word);
    }
    return lines.map(escapeToken);
  }

  // attention_lab/assets/plot.mjs
  var CONFIG = { responsive: true, displaylogo: false };
  function draw(container, fig) {
    if (!container || !globalThis.Plotly) return null;
    let gd = container.querySelector(":scope > .lab-figure");
    if (!gd) {
      gd = document.createElement("div");
      gd.className = "lab-figure";
      container.appendChild(gd);
    }
    const layout2 = fig.message === void 0 ? fig.layout : { ...fig.layout, annotations: [messageAt(fig.message, container)] };
    globalThis.Plotly.react(gd, fig.data, { ...layout2, autosize: true }, CONFIG);
    if (!fig.data.length) {
      container.querySelector(":scope > .colour-legend")?.remove();
      container.classList.remove("with-legend");
    }
    return gd;
  }
  var MESSAGE_CHAR_PX = 7.6;
  function messageAt(message, container) {
    const chars = Math.max(16, Math.floor((container.clientWidth || 600) / MESSAGE_CHAR_PX) - 4);
    return { text: wrapped(message, chars).join("<br>"), showarrow: false, font: { size: 14, color: "#555" } };
  }
  function emptyFigure(message, height = 160) {
    const hidden = { visible: false };
    return { data: [], message, layout: {
      height,
      xaxis: hidden,
      yaxis: hidden,
      plot_bgcolor: "white",
      annotations: [{ text: escapeToken(message), showarrow: false, font: { size: 14, color: "#555" } }],
      margin: { l: 10, r: 10, t: 10, b: 10 }
    } };
  }
  function outline(x0, x1, y0, y1, colour, width) {
    return { type: "rect", x0, x1, y0, y1, line: { color: colour, width } };
  }
  function rounded(z, Q, K) {
    const rows = [];
    for (let q = 0; q < Q; q++) {
      const row = new Array(K);
      for (let k = 0; k < K; k++) row[k] = Math.round(z[q * K + k] * 1e3) / 1e3;
      rows.push(row);
    }
    return rows;
  }
  function colourAxis(look) {
    const quantity = { value: "value-weighted share", rollout: "rollout share" }[look.reading] || "weight";
    const what = look.hideSpecials ? `renormalised ${quantity}` : quantity;
    let bar = { title: { text: what } }, low = 0, high = 1;
    if (look.scale === "log") {
      const ticks = [-4, -3, -2, -1, 0];
      bar = { title: { text: `${what} (log)` }, tickvals: ticks, ticktext: ["0.0001", "0.001", "0.01", "0.1", "1"] };
      low = Math.log10(LOG_FLOOR);
      high = 0;
    } else if (look.scale === "row") {
      bar = { title: { text: `${what} / row max` } };
    }
    return { colorscale: STYLE.colorscale, cmin: low, cmax: high, colorbar: { ...bar, thickness: 12 } };
  }
  function legend(container, fig, look) {
    let box = container.querySelector(":scope > .colour-legend");
    container.classList.toggle("with-legend", fig.data.length > 0);
    if (!fig.data.length) {
      box?.remove();
      return;
    }
    if (!box) {
      box = Object.assign(document.createElement("div"), { className: "colour-legend" });
      box.setAttribute("aria-hidden", "true");
      container.appendChild(box);
    }
    const axis = colourAxis(look), { cmin, cmax } = axis;
    const values = axis.colorbar.tickvals || [0, 0.2, 0.4, 0.6, 0.8, 1];
    const texts = axis.colorbar.ticktext || values.map(String);
    const key = JSON.stringify([axis.colorbar.title.text, values, fig.layout.margin.t, fig.layout.height]);
    if (box.dataset.key === key) return;
    box.dataset.key = key;
    const { t, b } = fig.layout.margin;
    box.style.setProperty("--legend-top", `${t}px`);
    box.style.setProperty("--legend-height", `${fig.layout.height - t - b}px`);
    const stops = STYLE.colorscale.map(([at, colour]) => `${colour} ${Math.round(100 * at)}%`).join(", ");
    const bar = Object.assign(document.createElement("div"), { className: "colour-bar" });
    bar.style.setProperty("--stops", stops);
    const ticks = Object.assign(document.createElement("div"), { className: "colour-ticks" });
    values.forEach((v, i) => {
      const tick = Object.assign(document.createElement("span"), { textContent: texts[i] });
      tick.style.setProperty("--at", (v - cmin) / (cmax - cmin));
      ticks.appendChild(tick);
    });
    const title = Object.assign(document.createElement("div"), { className: "colour-title", textContent: axis.colorbar.title.text });
    box.replaceChildren(bar, ticks, title);
  }
  function withColourBar(fig, look) {
    return { ...fig, layout: { ...fig.layout, coloraxis: colourAxis(look) } };
  }
  function spikes() {
    return { showspikes: true, spikemode: "across", spikethickness: 1, spikecolor: STYLE.highlight, spikedash: "solid" };
  }
  function shade(share, signed = false) {
    const a = Math.min(1, Math.abs(share));
    return { strength: a.toFixed(3), negative: signed && share < 0, deep: a > 0.55 };
  }

  // attention_lab/decoding/now.mjs
  function now(decoding, shown, look) {
    if (!shown) return { empty: true };
    const step = decoding.steps[shown - 1];
    const row = stepRow(decoding, "cross", shown, look);
    const chosen = head(row.stack, look.focus, false);
    const shades = scaled(chosen.z, 1, row.stack.K, look.scale);
    const words = row.labels.map((label, i) => ({
      label,
      weight: chosen.z[i],
      shade: unit(shades[i], look.scale),
      pieces: row.groups[i]
    }));
    return {
      empty: false,
      step: shown,
      token: step.label,
      forced: step.forced,
      name: chosen.name,
      words,
      hidden: look.hideSpecials
    };
  }
  function shadedWords(words, shadeOf, titleOf, extra = null) {
    const list = el("div", "words");
    words.forEach((w, i) => {
      if (i) list.append(" ");
      const span = el("span", "word shaded", w.label), { strength, negative, deep } = shadeOf(w);
      span.classList.toggle("negative", negative);
      span.classList.toggle("deep", deep);
      span.style.setProperty("--shade", strength);
      span.title = titleOf(w);
      if (extra) extra(w, span);
      list.appendChild(span);
    });
    return list;
  }
  function renderNow(container, state) {
    const view = el("div", "now-view");
    container.replaceChildren(view);
    if (state.empty) {
      view.append("Step 0: nothing written yet. ", el("b", "", "Step"), " writes the first token.");
      return;
    }
    const heading = el("div", "now-heading");
    heading.append(
      `Step ${state.step} wrote `,
      el("b", "", state.token || "∅"),
      `${state.forced ? " (forced by a what-if)" : ""}, looking at the source like this (${state.name}):`
    );
    const words = shadedWords(
      state.words,
      (w) => shade(Math.max(0, Math.min(1, w.shade))),
      (w) => `weight ${w.weight.toFixed(3)}; click: point the heads chosen in the Heads tab at it`,
      (w, span) => {
        span.dataset.pieces = w.pieces.join(",");
      }
    );
    const note = el("div", "now-note", "Darker words got more attention; hover a word for its weight." + (state.hidden ? " Special tokens hidden, weights renormalised." : ""));
    view.append(heading, words, note);
  }
  function mount2({ element, trigger }) {
    const box = root(element);
    const body = el("div", "lab-now");
    box.replaceChildren(el("div", "lab-label", "What the model looked at"), body);
    const draw2 = () => page.decoding ? renderNow(body, now(page.decoding, page.shown, page.look)) : body.replaceChildren();
    box.addEventListener("click", (event) => {
      const word = event.target.closest(".word[data-pieces]");
      if (word) trigger("select", { pieces: word.dataset.pieces, shown: page.shown });
    });
    watch((what) => what !== "kind" ? draw2() : null);
    draw2();
  }

  // attention_lab/decoding/steps.mjs
  function mount3({ element, props, watch: watchProp }) {
    const box = root(element);
    const range = Object.assign(el("input"), { type: "range", id: "lab-shown", min: 0, max: 0, step: 1, value: 0 });
    const name = Object.assign(el("label", "lab-control-name", "Show step"), { htmlFor: "lab-shown" });
    const count = el("span", "steps-count");
    const tokens = el("div", "steps-tokens");
    tokens.setAttribute("aria-label", "Tokens written, one a step");
    const row = el("div", "steps-row");
    row.append(name, range, count);
    box.replaceChildren(row, tokens);
    range.title = "← → move a step, Home and End the first and last (with no text box focused)";
    range.addEventListener("input", () => show(range.value));
    tokens.addEventListener("click", (event) => {
      const token = event.target.closest("[data-step]");
      if (token) show(Number(token.dataset.step));
    });
    const mark = () => {
      range.value = page.shown;
      count.textContent = `${page.shown} / ${steps()}`;
      for (const token of tokens.children) token.classList.toggle("current", Number(token.dataset.step) === page.shown);
    };
    const fill = () => {
      const d = page.decoding, n = steps();
      range.max = n;
      range.disabled = n === 0;
      tokens.replaceChildren(
        ...(d ? d.steps : []).map((step, i) => {
          const token = el("button", "token" + (step.forced ? " forced" : ""), d.out.labels[i] || "∅");
          token.type = "button";
          token.dataset.step = String(i + 1);
          token.title = `step ${i + 1}${step.forced ? ", forced by a what-if" : ""}`;
          return token;
        })
      );
      mark();
    };
    watch((what) => what === "decoding" ? fill() : what === "shown" ? mark() : null);
    watchProp("value", () => receive(props.value));
    if (props.value) receive(props.value);
    fill();
  }

  // attention_lab/core/tiles.mjs
  var MAX_CELL_PX = 22;
  function tiles(stack, scaled2) {
    const { L, H, Q, K, data } = stack;
    const gapQ = Math.max(1, Math.round(0.12 * Q)), gapK = Math.max(1, Math.round(0.12 * K));
    const rows = L * (Q + gapQ) - gapQ, cols = H * (K + gapK) - gapK;
    const values = new Float32Array(rows * cols).fill(NaN);
    for (let lh = 0; lh < L * H; lh++) {
      const top = Math.floor(lh / H) * (Q + gapQ), left = lh % H * (K + gapK);
      const block = scaled2(data.subarray(lh * Q * K, (lh + 1) * Q * K));
      for (let q = 0; q < Q; q++) values.set(block.subarray(q * K, (q + 1) * K), (top + q) * cols + left);
    }
    return { L, H, Q, K, gapQ, gapK, rows, cols, values };
  }
  function layout(t, width, height, fontPx = 12) {
    const margin = { l: Math.round(5 * fontPx), r: 10, t: fontPx + 10, b: 6 };
    const cellH = Math.max(1, Math.min(MAX_CELL_PX, (width - 80) / t.cols, (height - 50) / t.rows));
    const cellW = Math.max(1, (width - margin.l - margin.r) / t.cols);
    return { ...margin, cellW, cellH, width, height: Math.max(60, Math.ceil(cellH * t.rows) + margin.t + margin.b) };
  }
  function outlines(t, row, focus) {
    const { L, H, Q, K, gapQ, gapK } = t;
    const rows = [];
    if (row !== null && row >= 0 && row < Q) {
      for (let l = 0; l < L; l++) for (let h = 0; h < H; h++) rows.push([h * (K + gapK), l * (Q + gapQ) + row, K, 1]);
    }
    const framed = focus && focus[0] < L && focus[1] < H ? [focus[1] * (K + gapK), focus[0] * (Q + gapQ), K, Q] : null;
    return { rows, framed };
  }
  function palette(colorscale) {
    const stops = colorscale.map(([at, hex]) => [at, [1, 3, 5].map((i) => parseInt(hex.slice(i, i + 2), 16))]);
    const out = new Uint8ClampedArray(256 * 3);
    for (let i = 0; i < 256; i++) {
      const x = i / 255;
      let s = 1;
      while (s < stops.length - 1 && stops[s][0] < x) s++;
      const [a, ca] = stops[s - 1], [b, cb] = stops[s];
      const f = b > a ? Math.min(1, Math.max(0, (x - a) / (b - a))) : 0;
      for (let c = 0; c < 3; c++) out[3 * i + c] = Math.round(ca[c] + f * (cb[c] - ca[c]));
    }
    return out;
  }
  var COLOURS = palette(STYLE.colorscale);
  function pixels(t, low, high) {
    const out = new Uint8ClampedArray(t.rows * t.cols * 4);
    const span = high - low || 1;
    for (let i = 0; i < t.values.length; i++) {
      const v = t.values[i];
      if (Number.isNaN(v)) continue;
      const c = 3 * Math.round(255 * Math.min(1, Math.max(0, (v - low) / span)));
      out.set([COLOURS[c], COLOURS[c + 1], COLOURS[c + 2], 255], 4 * i);
    }
    return out;
  }
  function paint(box, grid, width, height, fontPx = 12) {
    let title = box.querySelector(":scope > .tiles-title"), canvas = box.querySelector(":scope > canvas.tiles");
    if (!canvas) {
      title = Object.assign(document.createElement("div"), { className: "tiles-title" });
      canvas = Object.assign(document.createElement("canvas"), { className: "tiles" });
      canvas.setAttribute("role", "img");
      box.replaceChildren(title, canvas);
    }
    const t = grid.tiles, at = layout(t, width, height, fontPx), ratio = globalThis.devicePixelRatio || 1;
    title.textContent = grid.title;
    canvas.setAttribute("aria-label", `${grid.title}: ${t.L} layers of ${t.H} heads`);
    canvas.style.setProperty("--width", `${at.width}px`);
    canvas.style.setProperty("--height", `${at.height}px`);
    const [w, h] = [Math.round(at.width * ratio), Math.round(at.height * ratio)];
    if (canvas.width !== w || canvas.height !== h) [canvas.width, canvas.height] = [w, h];
    Object.assign(canvas.dataset, { layers: t.L, heads: t.H, row: grid.row ?? "", focus: grid.focus ? grid.focus.join(",") : "" });
    canvas.geometry = { ...at, tiles: t };
    const cells = canvas.cells ??= document.createElement("canvas");
    if (cells.width !== t.cols || cells.height !== t.rows) [cells.width, cells.height] = [t.cols, t.rows];
    cells.getContext("2d").putImageData(new ImageData(pixels(t, ...grid.range), t.cols, t.rows), 0, 0);
    const ctx = canvas.getContext("2d");
    ctx.setTransform(ratio, 0, 0, ratio, 0, 0);
    ctx.fillStyle = "white";
    ctx.fillRect(0, 0, at.width, at.height);
    ctx.imageSmoothingEnabled = false;
    ctx.drawImage(cells, at.l, at.t, t.cols * at.cellW, t.rows * at.cellH);
    const box_ = ([x, y, w2, h2]) => [at.l + x * at.cellW, at.t + y * at.cellH, w2 * at.cellW, h2 * at.cellH];
    const { rows, framed } = outlines(t, grid.row, grid.focus);
    ctx.strokeStyle = STYLE.highlight;
    ctx.lineWidth = 1;
    for (const r of rows) ctx.strokeRect(...box_(r));
    if (framed) {
      ctx.strokeStyle = STYLE.focusLine;
      ctx.lineWidth = 2.5;
      ctx.strokeRect(...box_(framed));
    }
    ctx.fillStyle = "#444";
    ctx.font = `${fontPx}px sans-serif`;
    ctx.textAlign = "center";
    ctx.textBaseline = "bottom";
    for (let h2 = 0; h2 < t.H; h2++) ctx.fillText(`h${h2 + 1}`, at.l + (h2 * (t.K + t.gapK) + t.K / 2) * at.cellW, at.t - 4);
    ctx.textAlign = "right";
    ctx.textBaseline = "middle";
    for (let l = 0; l < t.L; l++) ctx.fillText(`layer ${l + 1}`, at.l - 6, at.t + (l * (t.Q + t.gapQ) + t.Q / 2) * at.cellH);
    return canvas;
  }
  function tileAt(canvas, x, y) {
    const g = canvas && canvas.geometry;
    if (!g) return null;
    const cx = (x - g.l) / g.cellW, cy = (y - g.t) / g.cellH, t = g.tiles;
    if (cx < 0 || cy < 0 || cx > t.cols || cy > t.rows) return null;
    const near = (c, size, gap, n) => Math.min(n - 1, Math.max(0, Math.floor((c + gap / 2) / (size + gap))));
    return [near(cy, t.Q, t.gapQ, t.L), near(cx, t.K, t.gapK, t.H)];
  }

  // attention_lab/core/figures.mjs
  var MIN_ROW_PX = 12;
  var MAX_ROW_PX = 30;
  function focusFigure(focused, look, title, row, axes, height) {
    const { Q, K } = focused;
    const ys = axisLabels(focused.rows), xs = axisLabels(focused.cols);
    const top = Math.min(labelPx(xs, 4.6), 110) + 34, bottom = 12;
    const rowPx = Math.min(MAX_ROW_PX, Math.max(MIN_ROW_PX, (height - top - bottom) / Q));
    const room = Math.max(1, Math.floor((height - top - bottom) / rowPx));
    const custom = [];
    for (let q = 0; q < Q; q++) custom.push(Array.from(focused.z.subarray(q * K, (q + 1) * K), (v) => Math.round(v * 1e4) / 1e4));
    const trace = {
      type: "heatmap",
      z: rounded(scaled(focused.z, Q, K, look.scale), Q, K),
      customdata: custom,
      x: xs,
      y: ys,
      coloraxis: "coloraxis",
      hovertemplate: `${axes[0]}: %{y}<br>${axes[1]}: %{x}<br>weight: %{customdata:.3f}<extra></extra>`
    };
    let rows = { type: "category", autorange: "reversed", tickfont: { size: 11 } };
    if (Q > room) {
      const first = row === null ? 0 : Math.min(Math.max(0, row - Math.floor(room / 2)), Q - room);
      rows = { ...rows, autorange: false, range: [first + room - 0.5, first - 0.5] };
    }
    const fits = Math.ceil(Math.min(Q, room) * rowPx) + top + bottom;
    const shapes = row !== null && row >= 0 && row < Q ? [outline(-0.5, K - 0.5, row - 0.5, row + 0.5, STYLE.highlight, 2)] : [];
    return { data: [trace], layout: {
      title: { text: title, font: { size: 12 }, x: 0, xanchor: "left", y: 1, yanchor: "top", pad: { t: 6, l: 4 } },
      height: Math.max(200, Math.min(height, fits)),
      margin: { l: Math.min(labelPx(ys), 140) + 10, r: 10, t: top, b: bottom },
      coloraxis: { ...colourAxis(look), showscale: false },
      plot_bgcolor: "white",
      dragmode: "pan",
      hovermode: "closest",
      // no grid lines: the cells cover them (plotly would draw them at every Step all the same)
      xaxis: { type: "category", side: "top", tickangle: -45, showgrid: false, zeroline: false, ...spikes() },
      yaxis: { ...rows, showgrid: false, zeroline: false, ...spikes() },
      shapes,
      modebar: { orientation: "v" }
    } };
  }
  function kindFigures(decoding, kind, shown, look, size) {
    const empty = (text) => ({ focus: emptyFigure(text, 200), grid: null });
    if (kind !== "encoder" && !shown) return empty("Nothing written yet: Step or Run to decode.");
    const w = weights(decoding, kind, shown, look);
    if (!w.rows.labels.length || !w.cols.labels.length) {
      return empty("Only special tokens here; untick “Hide special tokens” to see them.");
    }
    const rolled = look.reading === "rollout" && kind !== "cross";
    const chosen = head(w.stack, look.focus, rolled);
    const { kinds, readings } = page.names;
    const reading = look.reading !== "weights" ? ` · ${readings[look.reading]}` : "";
    const focused = { ...chosen, rows: w.rows.labels, cols: w.cols.labels };
    const focus = focusFigure(
      focused,
      look,
      `${kinds[kind].title}${reading}: ${chosen.name}`,
      w.current,
      kinds[kind].axes,
      size.focusHeight
    );
    const overview = rolled ? "Rollout through each layer (heads averaged)" : "Every head (layers down)";
    const { Q, K } = w.stack;
    const tiled = decoding.remembered(
      `tiles:${kind}`,
      `${w.key}|${look.scale}`,
      () => tiles(w.stack, (z) => scaled(z, Q, K, look.scale))
    );
    const { cmin, cmax } = colourAxis(look);
    return { focus, grid: {
      tiles: tiled,
      row: w.current,
      focus: look.focus,
      range: [cmin, cmax],
      title: `${overview}: click one to focus it`
    } };
  }

  // attention_lab/core/views.mjs
  var BESIDE_PX = 700;
  var HINTS = { cross: "key 1", encoder: "key 2", decoder_self: "key 3" };
  var presenterMode = () => Boolean(globalThis.document?.body.classList.contains("lab-presenter"));
  function large(fig, presenting = presenterMode()) {
    if (!presenting) return fig;
    const bigger = (axis) => axis ? { ...axis, tickfont: { ...axis.tickfont || {}, size: 16 } } : axis;
    const layout2 = { ...fig.layout, font: { size: 16 }, xaxis: bigger(fig.layout.xaxis), yaxis: bigger(fig.layout.yaxis) };
    if (layout2.title) {
      layout2.title = { ...layout2.title, font: { size: 17 } };
      if (layout2.margin) layout2.margin = { ...layout2.margin, t: layout2.margin.t + 10 };
    }
    return { ...fig, layout: layout2 };
  }
  function sizes({ width, top }) {
    const beside = width >= BESIDE_PX;
    const focusHeight = Math.max(240, Math.min(900, globalThis.innerHeight - top - 16));
    const gridWidth = beside ? Math.min(Math.round(0.42 * width), 420) : width;
    return { beside, focusHeight, gridWidth, gridHeight: beside ? focusHeight : Math.min(360, Math.round(0.6 * width)) };
  }
  function kindButtons(className, names) {
    const kinds = el("div", "views-kinds");
    kinds.setAttribute("role", "group");
    kinds.setAttribute("aria-label", "Kind of attention");
    for (const kind of names.order) {
      const title = names.kinds[kind].title;
      const button = el("button", className, title);
      Object.assign(button, { type: "button", title: `${title} (${HINTS[kind]})` });
      button.dataset.kind = kind;
      button.addEventListener("click", () => setKind(kind));
      kinds.appendChild(button);
    }
    return kinds;
  }
  function controls(names) {
    const kinds = kindButtons("views-kind", names);
    const focus = select([[names.focus_mean, names.focus_mean]], names.focus_mean);
    focus.title = "↑ ↓ change the focused head (with no text box focused); or click a head in the grid";
    focus.addEventListener("change", () => setLook({ focus: focusOf(focus.value) }));
    const words = Object.assign(el("input"), { type: "checkbox", checked: true });
    words.addEventListener("change", () => setLook({ words: words.checked }));
    const specials = Object.assign(el("input"), { type: "checkbox", checked: false });
    specials.addEventListener("change", () => setLook({ hideSpecials: specials.checked }));
    const scale = select(Object.entries(names.scales), "linear");
    scale.addEventListener("change", () => setLook({ scale: scale.value }));
    const reading = select(Object.entries(names.readings), "weights");
    reading.addEventListener("change", () => setLook({ reading: reading.value }));
    const png = Object.assign(el("button", "views-download", "PNG"), { type: "button", title: "The focused head as PNG" });
    const svg = Object.assign(el("button", "views-download", "SVG"), { type: "button", title: "The focused head as SVG" });
    const bar = el("div", "views-bar");
    bar.append(kinds, labelled("Focus head", focus, "views-focus-choice"), png, svg);
    const look = el("div", "views-look");
    look.append(
      labelled("Merge pieces into words", words, "check"),
      labelled("Hide special tokens", specials, "check"),
      labelled("Colour scale", scale),
      labelled("Reading", reading)
    );
    return { parts: [bar, look], kinds, focus, words, specials, scale, reading, png, svg };
  }
  var PAGE_SOURCE = { decoding: () => page.decoding, shown: () => page.shown, empty: "Run or Step to decode." };
  function attentionViews(box, source = PAGE_SOURCE) {
    const figures = el("div", "views-figures");
    const focusBox = el("div", "views-focus"), gridBox = el("div", "views-grid");
    figures.append(focusBox, gridBox);
    box.replaceChildren(figures);
    let shape = "", c = null, drawn = null, focused = null;
    const download = (format) => {
      if (focused && focused.data.length && globalThis.Plotly) {
        globalThis.Plotly.downloadImage(withColourBar(focused, page.look), { format, filename: "attention-head", width: 900 });
      }
    };
    const laidOut = () => {
      if (c || !page.names) return c;
      c = source.compact ? { kinds: kindButtons("views-kind-compact", page.names), parts: [] } : controls(page.names);
      box.prepend(...source.compact ? [c.kinds] : c.parts);
      c.png?.addEventListener("click", () => download("png"));
      c.svg?.addEventListener("click", () => download("svg"));
      return c;
    };
    const sync = () => {
      if (!laidOut()) return;
      for (const button of c.kinds.children) button.setAttribute("aria-pressed", String(button.dataset.kind === page.kind));
      if (source.compact) return;
      const d = source.decoding();
      const now2 = d ? `${Math.max(d.Le, d.Ld)}x${d.H}` : "";
      if (now2 !== shape && d) {
        shape = now2;
        c.focus.replaceChildren(...focusChoices(Math.max(d.Le, d.Ld), d.H, page.names.focus_mean).map((label) => {
          const option = el("option", "", label);
          option.value = label;
          return option;
        }));
      }
      const f = page.look.focus;
      c.focus.value = f ? focusLabel(...f) : page.names.focus_mean;
      if (c.focus.value === "") c.focus.value = page.names.focus_mean;
      Object.assign(c.words, { checked: page.look.words });
      Object.assign(c.specials, { checked: page.look.hideSpecials });
      c.scale.value = page.look.scale;
      c.reading.value = page.look.reading;
    };
    const drawing = (d, size) => [
      d,
      d && page.kind !== "encoder" ? `${d.revision}|${source.shown()}` : "",
      page.kind,
      JSON.stringify(page.look),
      JSON.stringify(size),
      presenterMode(),
      source.empty
    ];
    const redraw = () => {
      sync();
      if (!place.visible || !page.names) return;
      const size = sizes(place);
      figures.classList.toggle("beside", size.beside);
      const d = source.decoding(), now2 = drawing(d, size);
      if (drawn && now2.every((part2, i) => part2 === drawn[i])) return;
      drawn = now2;
      const made = d ? kindFigures(d, page.kind, source.shown(), page.look, size) : { focus: emptyFigure(source.empty, 200) };
      if (made.grid) paint(gridBox, made.grid, size.gridWidth, size.gridHeight, presenterMode() ? 16 : 12);
      else gridBox.replaceChildren();
      focused = large(made.focus);
      draw(focusBox, focused);
      legend(focusBox, focused, page.look);
    };
    gridBox.addEventListener("click", (event) => {
      const canvas = gridBox.querySelector("canvas.tiles");
      if (!canvas) return;
      const rect = canvas.getBoundingClientRect();
      const tile = tileAt(canvas, event.clientX - rect.left, event.clientY - rect.top);
      if (tile) setLook({ focus: tile });
    });
    const place = placeOf(figures, redraw);
    watch(redraw, true);
    globalThis.addEventListener("resize", redraw);
    redraw();
    return redraw;
  }
  function mount4({ element }) {
    attentionViews(root(element));
  }

  // attention_lab/decoding/lesson.mjs
  var none = () => {
  };
  var PARTS = ["lab-steps", "now", "candidates", "views"];
  function part(root2, name) {
    const element = root2.querySelector(`[data-part="${name}"]`);
    const inner = document.createElement("div");
    inner.className = "lab-drawn";
    element.replaceChildren(inner);
    return { element, props: { value: null }, watch: none, trigger: none };
  }
  function start(state, root2 = document) {
    (root2.body || root2).classList.add("lab-offline");
    setNames(state.names);
    mount3(part(root2, "lab-steps"));
    mount2(part(root2, "now"));
    mount(part(root2, "candidates"));
    mount4(part(root2, "views"));
    setKind(state.kind);
    setLook(state.look);
    receive({ op: "full", key: { serial: 0, version: 0 }, shown: state.shown, data: state.decoding });
  }
  return __toCommonJS(lesson_exports);
})();
