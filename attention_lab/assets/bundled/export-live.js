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

  // attention_lab/export/live.mjs
  var live_exports = {};
  __export(live_exports, {
    open: () => open,
    start: () => start,
    threads: () => threads
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
  function renderCandidates(container, decoding2, shown) {
    const list = el("div", "candidates");
    container.replaceChildren(list);
    if (!shown) return;
    const step = decoding2.steps[shown - 1];
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
  function read(decoding2, kind, shown, reading) {
    const pieces = decoding2.pieces(kind, shown);
    if (reading === "value" && pieces.norms) return valueWeighted(pieces, pieces.norms);
    if (reading === "rollout") {
      if (kind === "cross") {
        const S = decoding2.S, last = decoding2.encoderRollout.subarray((decoding2.Le - 1) * S * S, decoding2.Le * S * S);
        return through(pieces, last);
      }
      return decoding2.rollout(kind, shown);
    }
    return pieces;
  }
  function weights(decoding2, kind, shown, look) {
    if (kind === "encoder") shown = 0;
    const key = [kind, shown, look.words, look.hideSpecials, look.reading].join("|");
    return decoding2.remembered(`weights:${kind}`, key, () => ({ ...computeWeights(decoding2, kind, shown, look), key }));
  }
  function computeWeights(decoding2, kind, shown, look) {
    let rows, cols, rowPiece = null;
    if (kind === "encoder") {
      rows = cols = units(decoding2.src, decoding2.S, look.words);
    } else {
      rows = units(decoding2.out, shown, look.words);
      cols = kind === "cross" ? units(decoding2.src, decoding2.S, look.words) : units(decoding2.inputs(), shown, look.words);
      rowPiece = shown - 1;
    }
    const merged = inUnits(read(decoding2, kind, shown, look.reading), rows, cols, look.hideSpecials);
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
  function stepRow(decoding2, kind, shown, look) {
    const cols = kind === "cross" ? units(decoding2.src, decoding2.S, look.words) : units(decoding2.inputs(), shown, look.words);
    const one = { labels: ["·"], groups: [[0]], special: [false] };
    const all = read(decoding2, kind, shown, look.reading);
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
  function axisLabels(tokens2) {
    const cut = (t) => [...t].length <= MAX_LABEL ? t : [...t].slice(0, MAX_LABEL - 1).join("") + "…";
    return unique(tokens2.map((t) => escapeToken(cut(t))));
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
  function now(decoding2, shown, look) {
    if (!shown) return { empty: true };
    const step = decoding2.steps[shown - 1];
    const row = stepRow(decoding2, "cross", shown, look);
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
    const tokens2 = el("div", "steps-tokens");
    tokens2.setAttribute("aria-label", "Tokens written, one a step");
    const row = el("div", "steps-row");
    row.append(name, range, count);
    box.replaceChildren(row, tokens2);
    range.title = "← → move a step, Home and End the first and last (with no text box focused)";
    range.addEventListener("input", () => show(range.value));
    tokens2.addEventListener("click", (event) => {
      const token = event.target.closest("[data-step]");
      if (token) show(Number(token.dataset.step));
    });
    const mark = () => {
      range.value = page.shown;
      count.textContent = `${page.shown} / ${steps()}`;
      for (const token of tokens2.children) token.classList.toggle("current", Number(token.dataset.step) === page.shown);
    };
    const fill = () => {
      const d = page.decoding, n = steps();
      range.max = n;
      range.disabled = n === 0;
      tokens2.replaceChildren(
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
  function kindFigures(decoding2, kind, shown, look, size) {
    const empty = (text) => ({ focus: emptyFigure(text, 200), grid: null });
    if (kind !== "encoder" && !shown) return empty("Nothing written yet: Step or Run to decode.");
    const w = weights(decoding2, kind, shown, look);
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
    const tiled = decoding2.remembered(
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

  // attention_lab/assets/keys.mjs
  var KEYS = [
    ["← →", "the step before, the step after (at the last step, → decodes the next one, as Step)"],
    ["Home End", "the first step (0, before any output), the last"],
    ["↑ ↓", "the focused head before, after (the mean of all heads comes first)"],
    ["1 2 3", "cross-attention, encoder self-attention, decoder self-attention"],
    ["?", "this list"]
  ];
  function typing(target) {
    if (!target || !target.closest) return false;
    return !!target.closest("input, textarea, select, [contenteditable=''], [contenteditable='true']");
  }
  function nextFocus(focus, delta, layers, heads) {
    const choices = focusChoices(layers, heads, null).map(focusOf);
    const at = Math.max(0, choices.findIndex((f) => JSON.stringify(f) === JSON.stringify(focus)));
    return choices[(at + delta + choices.length) % choices.length];
  }
  var MOVES = ["ArrowLeft", "Home", "End", "ArrowUp", "ArrowDown"];
  function press(key, { step, help }) {
    const n = steps(), d = page.decoding;
    if (MOVES.includes(key) && !d) return false;
    if (key === "ArrowLeft") show(page.shown - 1);
    else if (key === "ArrowRight") {
      if (page.shown < n) show(page.shown + 1);
      else step();
    } else if (key === "Home") show(0);
    else if (key === "End") show(n);
    else if (key === "ArrowUp" || key === "ArrowDown") {
      setLook({ focus: nextFocus(page.look.focus, key === "ArrowDown" ? 1 : -1, Math.max(d.Le, d.Ld), d.H) });
    } else if (["1", "2", "3"].includes(key) && page.names) setKind(page.names.order[Number(key) - 1]);
    else if (key === "?") help();
    else return false;
    return true;
  }
  function install(doc, actions) {
    if (doc.__labKeys) return;
    doc.__labKeys = true;
    doc.addEventListener("keydown", (event) => {
      if (event.ctrlKey || event.metaKey || event.altKey || typing(event.target)) return;
      if (press(event.key, actions)) event.preventDefault();
    });
  }

  // attention_lab/decoding/pieces.mjs
  var WORD_BOUNDARY = "▁";
  var SPACE = "␣";
  var PUNCTUATION = /^[\p{P}\p{S}]+$/u;
  function isPunctuation(piece) {
    return !!piece && PUNCTUATION.test(piece);
  }
  function startsWord(piece, previous = "", characterLevel = false) {
    return characterLevel || piece.startsWith(WORD_BOUNDARY) || isPunctuation(piece) || isPunctuation(previous);
  }
  function wordGroups(pieces, special, characterLevel = false) {
    const groups = [];
    pieces.forEach((piece, i) => {
      const alone = special[i] || i > 0 && special[i - 1];
      if (!groups.length || alone || startsWord(piece, pieces[i - 1] ?? "", characterLevel)) groups.push([i]);
      else groups.at(-1).push(i);
    });
    return groups;
  }
  var PY_SPACE = "[\\t-\\r\\x1c-\\x20\\x85\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000]";
  var EDGES = new RegExp(`^${PY_SPACE}+|${PY_SPACE}+$`, "g");
  var strip = (text) => text.replaceAll(WORD_BOUNDARY, " ").replace(EDGES, "");
  function pieceLabel(piece, first, special = false) {
    if (special) return piece;
    const text = [...piece].some((c) => c !== WORD_BOUNDARY) ? strip(piece) : "";
    if (!text) return SPACE;
    return first ? text : "##" + text;
  }
  function wordLabel(pieces) {
    if (pieces.length === 1) return pieceLabel(pieces[0], true);
    return strip(pieces.join("")) || SPACE;
  }
  function labelledPieces(pieces, special, characterLevel = false) {
    const labels = [], words = [], group = [];
    wordGroups(pieces, special, characterLevel).forEach((members, g) => {
      members.forEach((i, k) => {
        labels.push(pieceLabel(pieces[i], k === 0, special[i]));
        words.push(special[i] ? pieces[i] : wordLabel(members.slice(0, k + 1).map((j) => pieces[j])));
        group.push(g);
      });
    });
    return { labels, words, group, special: [...special] };
  }
  function tokenLabel(piece, special, characterLevel = false) {
    return pieceLabel(piece, startsWord(piece, "", characterLevel), special);
  }

  // attention_lab/decoding/model.mjs
  var BLANK = /^[\s\p{Cc}\p{Cf}\p{Z}]*$/u;
  var ALNUM = /^[\p{L}\p{N}]$/u;
  var MARKS = /[\uFDD0-\uFDD2]/g;
  var InputError = class extends Error {
  };
  var LiveModel = class _LiveModel {
    /** `parts`: the graphs' bytes (encoder, decoder) and their weights (Uint8Array each), the tokenizer's JSON, and
     * `config` (what export wrote: the model's sizes, ids, limits, alphabet and character names). */
    static async load(ort, Tokenizer, { encoder, decoder, weights: weights2, tokenizer, config }) {
      const options = {
        executionProviders: ["wasm"],
        graphOptimizationLevel: "all",
        externalData: [{ path: "weights.bin", data: weights2 }]
      };
      const sessions = [
        await ort.InferenceSession.create(encoder, options),
        await ort.InferenceSession.create(decoder, options)
      ];
      return new _LiveModel(ort, sessions, new Tokenizer(tokenizer, {}), config);
    }
    constructor(ort, [encoder, decoder], tokenizer, config) {
      Object.assign(this, { ort, encoder, decoder, tokenizer, config });
      this.special = new Set(config.special_ids ?? [config.pad_id, config.bos_id, config.eos_id]);
      this.pieces = /* @__PURE__ */ new Map();
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
        const text = this.tokenizer.decode([id], { skip_special_tokens: false, clean_up_tokenization_spaces: false });
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
      return this.tokenizer.encode(text, { add_special_tokens: marked }).ids.map((id) => id ?? this.config.unk_id);
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
      const full2 = this.config.marks_source ? this.ids(text, true) : [...this.ids(text), this.config.eos_id];
      const ids = full2.length > this.config.max_len ? [...full2.slice(0, this.config.max_len - 1), this.config.eos_id] : full2;
      if (ids.length < full2.length) notice += `The source was ${full2.length} tokens; only the first ${ids.length - 1} are used.`;
      return { ids, notice: notice.trim() };
    }
    /** A warning when the source (its ids, the end token last) is longer than anything the model saw in training, ""
     * otherwise (models.registry.ModelEntry.length_notice). */
    lengthNotice(ids) {
      const n = ids.length - 1, longest = this.config.trained_length;
      if (!longest || n <= longest) return "";
      const unit2 = this.config.character_level ? "characters" : "tokens";
      return `This source is ${n} ${unit2}, longer than any the model saw in training (up to ${longest}): expect the output to degrade.`;
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
    async start(ids, topK2 = 5, maxNew = null, ablated = []) {
      const source = new this.ort.Tensor("int64", BigInt64Array.from(ids, BigInt), [1, ids.length]);
      const keep = this.keep(ablated);
      const out = await this.encoder.run(this.fed(this.encoder, { source, keep_encoder: keep.encoder }));
      return new LiveSession(this, ids, out, topK2, maxNew, keep);
    }
    /** The graphs' head masks for `ablated`: per kind, (layers, heads) of 1 (kept) or 0 (ablated). */
    keep(ablated) {
      const c = this.config, H = c.n_heads;
      const mask = (L) => new Float32Array(L * H).fill(1);
      const keep = { encoder: mask(c.n_encoder_layers), decoder_self: mask(c.n_decoder_layers), cross: mask(c.n_decoder_layers) };
      for (const [kind, layer, head2] of ablated) {
        if (!keep[kind] || layer < 0 || head2 < 0 || head2 >= H || layer * H + head2 >= keep[kind].length) {
          throw new InputError(`No such head: ${kind} layer ${layer + 1}, head ${head2 + 1}.`);
        }
        keep[kind][layer * H + head2] = 0;
      }
      const tensor = (data) => new this.ort.Tensor("float32", data, [data.length / H, H]);
      return { encoder: tensor(keep.encoder), decoder_self: tensor(keep.decoder_self), cross: tensor(keep.cross) };
    }
    /** The `inputs` a graph reads (one exported before it took head masks has no keep_* inputs). */
    fed(graph, inputs) {
      return Object.fromEntries(graph.inputNames.map((name) => [name, inputs[name]]));
    }
  };
  var LiveSession = class {
    constructor(model, ids, encoded, topK2, maxNew = null, keep = null) {
      const c = model.config;
      this.model = model;
      this.keep = keep || model.keep([]);
      this.srcIds = ids;
      this.topK = Math.max(1, Math.min(topK2, c.tgt_vocab_size));
      this.maxNew = Math.min(maxNew || Infinity, c.max_new_tokens);
      this.encoder = encoded.encoder.data;
      this.encoderNorms = encoded.encoder_norms.data;
      this.encoderRollout = encoded.encoder_rollout.data;
      this.crossNorms = encoded.cross_norms.data;
      this.cross = { cross_k: encoded.cross_k, cross_v: encoded.cross_v };
      const K = c.head_dim ?? c.d_model / c.n_heads;
      const empty = new model.ort.Tensor("float32", new Float32Array(0), [c.n_decoder_layers, c.n_heads, 0, K]);
      this.caches = [{ past_k: empty, past_v: empty }];
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
      for (const id of c.banned) row[id] = -Infinity;
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
      const held = [...step === 0 ? rules.begin_banned : [], ...step + 1 < rules.min_length ? rules.eos_ids : []];
      if (forced == null && !held.length) return logits;
      const out = Float32Array.from(logits);
      if (forced != null) {
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
        self: out.self.data,
        // (Ld, H, t + 1)
        cross: out.cross.data,
        // (Ld, H, S)
        selfNorms: out.self_norms.data
        // (Ld, H)
      };
      step.rollout = rolloutRow(step.self, this.steps.map((s) => s.rollout), c.n_decoder_layers, c.n_heads);
      this.caches.push({ past_k: out.next_k, past_v: out.next_v });
      this.steps.push(step);
      return step;
    }
    /** The decoder's step after the token `previous`, reading `cache` ({past_k, past_v}): the graph's outputs. */
    decode(previous, cache) {
      const m = this.model;
      const token = new m.ort.Tensor("int64", BigInt64Array.of(BigInt(previous)), [1, 1]);
      const inputs = { token, ...cache, ...this.cross, keep_self: this.keep.decoder_self, keep_cross: this.keep.cross };
      return m.decoder.run(m.fed(m.decoder, inputs));
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
  };
  function rolloutRow(self, rows, Ld, H) {
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
  function softmax(logits) {
    let max = -Infinity;
    for (const x of logits) if (x > max) max = x;
    const out = new Float32Array(logits.length);
    let sum = 0;
    for (let i = 0; i < logits.length; i++) sum += out[i] = Math.exp(logits[i] - max);
    for (let i = 0; i < out.length; i++) out[i] /= sum;
    return out;
  }
  function topK(values, k) {
    const best2 = [];
    for (let i = 0; i < values.length; i++) {
      if (best2.length < k || values[i] > values[best2.at(-1)]) {
        let at = best2.length;
        while (at > 0 && values[i] > values[best2[at - 1]]) at--;
        best2.splice(at, 0, i);
        if (best2.length > k) best2.pop();
      }
    }
    return best2;
  }
  function ideograph(char, ranges) {
    const code = char.codePointAt(0);
    if (!ranges.some(([a, b]) => code >= a && code <= b)) return null;
    return "cjk unified ideograph-" + code.toString(16).padStart(4, "0");
  }

  // attention_lab/decoding/beams.mjs
  var ALPHA = 1;
  function lengthNormalise(logProb, length, alpha = ALPHA) {
    return logProb / ((5 + length) / 6) ** alpha;
  }
  function logSoftmax(logits) {
    let max = -Infinity;
    for (const x of logits) if (x > max) max = x;
    let sum = 0;
    for (const x of logits) sum += Math.exp(x - max);
    const shift = max + Math.log(sum), out = new Float32Array(logits.length);
    for (let i = 0; i < logits.length; i++) out[i] = logits[i] - shift;
    return out;
  }
  function best(beams, logProbs, n) {
    const top = [];
    const V = logProbs[0].length;
    beams.forEach((beam, b) => {
      const row = logProbs[b];
      for (let v = 0; v < V; v++) {
        const score = Math.fround(beam.score + row[v]);
        if (score === -Infinity || top.length === n && score <= top[n - 1][0]) continue;
        let at = top.length;
        while (at > 0 && score > top[at - 1][0]) at--;
        top.splice(at, 0, [score, b * V + v]);
        if (top.length > n) top.pop();
      }
    });
    return top;
  }
  async function beamSearch(session, k, alpha = ALPHA) {
    const c = session.model.config, steps2 = session.maxNew, eos = c.eos_id;
    let beams = [{ tokens: [], score: 0, cache: session.caches[0] }];
    const finished = [], history = [];
    let atLimit = false;
    for (let step = 0; step < steps2 && beams.length; step++) {
      const outs = [];
      for (const beam of beams) outs.push(await session.decode(beam.tokens.length ? beam.tokens.at(-1) : c.bos_id, beam.cache));
      const logProbs = outs.map((out) => logSoftmax(session.ruled(out.logits.data, step)));
      const V = logProbs[0].length;
      const live = [];
      best(beams, logProbs, 2 * k).forEach(([score, flat], rank) => {
        const b = Math.floor(flat / V), token = flat % V, tokens2 = [...beams[b].tokens, token];
        if (token === eos) {
          if (rank < k) finished.push([lengthNormalise(score, tokens2.length, alpha), tokens2.slice(0, -1)]);
        } else if (live.length < k) {
          live.push({ tokens: tokens2, score, cache: { past_k: outs[b].next_k, past_v: outs[b].next_v } });
        }
      });
      history.push(live.map((beam) => [beam.tokens, beam.score]));
      beams = live;
      atLimit = step + 1 === steps2;
      if (atLimit || cannotImprove(finished, live, step + 1, steps2, k, alpha)) break;
    }
    const candidates = finished.slice();
    if (atLimit || candidates.length < k) {
      for (const beam of beams) candidates.push([lengthNormalise(beam.score, beam.tokens.length, alpha), beam.tokens]);
    }
    candidates.sort((a, b) => b[0] - a[0]);
    return { tokens: candidates[0][1], score: candidates[0][0], history, candidates: candidates.map(([s, t]) => [t, s]) };
  }
  function cannotImprove(finished, live, length, maxLength, k, alpha) {
    if (finished.length < k) return false;
    const worstKept = finished.map(([score]) => score).sort((a, b) => b - a)[k - 1];
    const bestLive = live.length ? Math.max(...live.map((beam) => beam.score)) : -Infinity;
    if (bestLive === -Infinity) return true;
    const bound = Math.max(lengthNormalise(bestLive, length + 1, alpha), lengthNormalise(bestLive, maxLength + 1, alpha));
    return bound < worstKept;
  }

  // attention_lab/decoding/messages.mjs
  var SCALE2 = 65535;
  function base64(bytes) {
    let text = "";
    for (let i = 0; i < bytes.length; i += 32768) text += String.fromCharCode(...bytes.subarray(i, i + 32768));
    return btoa(text);
  }
  function q16(values) {
    const view = new DataView(new ArrayBuffer(2 * values.length));
    for (let i = 0; i < values.length; i++) view.setUint16(2 * i, Math.round(Math.min(1, Math.max(0, values[i])) * SCALE2), true);
    return base64(new Uint8Array(view.buffer));
  }
  function f32(values) {
    const view = new DataView(new ArrayBuffer(4 * values.length));
    for (let i = 0; i < values.length; i++) view.setFloat32(4 * i, values[i], true);
    return base64(new Uint8Array(view.buffer));
  }
  var round6 = (p) => Math.round(p * 1e6) / 1e6;
  function stepData(session, t) {
    const m = session.model, step = session.steps[t];
    const row = step.rollout;
    const flat = new Float64Array(row.length * (t + 1));
    row.forEach((r, l) => flat.set(r, l * (t + 1)));
    return {
      token: step.token,
      label: m.label(step.token),
      forced: step.forced,
      prob: round6(step.prob),
      top: step.topIds.map((id, i) => [m.label(id), id, round6(step.topProbs[i])]).filter(([, , p]) => p > 0),
      cross: q16(step.cross),
      self: q16(step.self),
      self_norms: f32(step.selfNorms),
      self_rollout: q16(flat)
    };
  }
  function tokens(session, ids) {
    const m = session.model;
    return labelledPieces(ids.map((id) => m.piece(id)), ids.map((id) => m.special.has(id)), m.config.character_level);
  }
  function decoding(session) {
    const m = session.model, c = m.config;
    return {
      model: c.name,
      layers: [c.n_encoder_layers, c.n_decoder_layers],
      heads: c.n_heads,
      character_level: c.character_level,
      bos: m.piece(c.bos_id),
      src: tokens(session, session.srcIds),
      out: tokens(session, session.tokens),
      encoder: q16(session.encoder),
      encoder_norms: f32(session.encoderNorms),
      encoder_rollout: q16(session.encoderRollout),
      cross_norms: session.steps.length ? f32(session.crossNorms) : null,
      steps: session.steps.map((_, t) => stepData(session, t)),
      original: null,
      interventions: false
    };
  }
  function full(session, key, shown) {
    return { op: "full", key, shown, data: decoding(session) };
  }
  function more(session, key, after, shown = session.steps.length) {
    const t = session.steps.length - 1;
    const out = tokens(session, session.tokens);
    return {
      op: "step",
      key,
      after,
      shown,
      step: stepData(session, t),
      out: { labels: out.labels[t], words: out.words[t], group: out.group[t], special: out.special[t] },
      cross_norms: t === 0 ? f32(session.crossNorms) : null
    };
  }
  function fewer(session, key, after, shown = session.steps.length) {
    return { op: "back", key, after, shown, steps: session.steps.length };
  }
  function original(session, steps2, at) {
    return { out: tokens(session, steps2.map((s) => s.token)), cross: steps2.map((s) => q16(s.cross)), at };
  }

  // attention_lab/decoding/loop.mjs
  var FINISHED = "Finished: use Back, a what-if token, or Reset.";
  var STEP_FINISHED = "Decoding has finished: use Back, a what-if token, or Reset.";
  var NOTHING_BACK = "Nothing to go back to: this is step 0.";
  var PICK_FIRST = "Decode a step first, then pick another candidate token.";
  var PICK_LISTED = "Pick one of the candidate tokens listed for this step.";
  var BEAM_MODE = "Beam mode: Step is off, since it decodes greedily. Run decodes with beam search (the Beams tab lists them).";
  function lastWord(session) {
    const n = session.steps.length;
    return n > 1 && session.steps[n - 1].token === session.model.config.eos_id ? n - 1 : n;
  }
  var Loop = class {
    constructor(model, ui) {
      Object.assign(this, { model, ui, session: null, text: null, options: null, notice: "" });
      Object.assign(this, { serial: 0, version: 0, before: null, beamed: null, found: null, queue: Promise.resolve() });
      this.unsent = false;
    }
    key() {
      return this.session ? { serial: this.serial, version: this.version } : null;
    }
    /** Do `action` after whatever was asked before it (clicks are taken in order); a user's mistake is said in one
     * line and changes nothing. */
    act(action) {
      this.queue = this.queue.then(async () => {
        try {
          this.ui.say("");
          await action();
        } catch (err) {
          if (!(err instanceof InputError) && this.ui.failed) return this.ui.failed(err, this.retry || (() => {
          }));
          if (err instanceof InputError && this.ui.refused && this.retry) return this.ui.refused(err, this.retry);
          if (!(err instanceof InputError)) console.error(err);
          this.ui.say(String(err.message || err).split("\n")[0], true);
        }
      });
      return this.queue;
    }
    /** Whether this loop can answer `action` ("run", "step", "back", "reset", "what-if") as the server would: not
     * on a decoding with interventions (an ablation or an edit is the server's), Back only on its own decoding (Back
     * right after the server replaced a decoding restores the one it replaced), and a what-if only on a decoding whose
     * source it can read again (its own, or one of the Source as it is now). */
    canTake(action) {
      const held = page.decoding;
      if (held && held.interventions) return false;
      if (action !== "back" && action !== "what-if") return true;
      if (!held || sameKey(page.key, this.key())) return true;
      if (action === "back") return false;
      try {
        return sameSource(held, this.model.source(this.ui.source()).ids, this.model);
      } catch {
        return false;
      }
    }
    /** The decoding the actions work on. Run and Step (`fresh`) work on the Source and the options as they are now:
     * the loop's own decoding while it was started from them and the page still holds it; else the page's, when
     * another made it (the server, before this page could decode) from the same source, taken over by forcing its
     * tokens; else a new one. Back and a what-if work on the decoding the page holds, whatever the Source says now. */
    async current(fresh = true) {
      const text = this.ui.source(), options = this.ui.options();
      const ours = this.session && sameKey(page.key, this.key());
      const asked = text === this.text && JSON.stringify(options) === JSON.stringify(this.options);
      if (ours && (asked || !fresh)) return this.session;
      const { ids, notice } = this.model.source(text);
      const session = await this.model.start(ids, options.topK, options.maxNew, options.ablated || []);
      Object.assign(this, { session, text, options, before: null, beamed: null });
      this.notice = [notice, this.model.lengthNotice(ids)].filter(Boolean).join(" ");
      const held = page.decoding;
      if (held && page.key && !ours && sameSource(held, ids, this.model) && held.steps.every((s, i) => session.canWrite(s.token, i))) {
        for (const step of held.steps) await session.step(step.token);
        [this.serial, this.version] = [page.key.serial, page.key.version];
        return session;
      }
      this.serial = Math.max(this.serial, page.key ? page.key.serial : 0) + 1;
      this.version = 0;
      this.unsent = true;
      return session;
    }
    /** Tell the views (`message`) and the loop's outputs what changed. */
    send(message) {
      this.unsent = false;
      if (message) receive(message);
      this.ui.wrote(this.outputs());
    }
    /** The loop's outputs as the server's step loop shows them (decoding/view.py). */
    outputs() {
      const s = this.session, n = s ? s.steps.length : 0;
      const text = (tokens2) => this.model.tokenizer.decode(tokens2, { skip_special_tokens: true });
      const before = this.before, beam = this.searchMode().strategy === "beam" ? BEAM_MODE : "";
      return {
        output: n ? text(s.tokens) : "",
        status: [s ? this.notice : "", s && s.finished ? FINISHED : "", beam].filter(Boolean).join(" "),
        canStep: !beam && !(s && s.finished),
        // as the server's: a finished decoding steps on only for another Source
        canBack: n > 0,
        original: before ? { value: text(before.tokens), label: "Before the what-if" } : { value: null, label: "" }
      };
    }
    changed() {
      this.version++;
      return this.key();
    }
    searchMode() {
      return this.ui.search ? this.ui.search() : { strategy: "greedy", beamSize: 1 };
    }
    /** Decode to the end: greedily from where the decoding is (a finished one afresh), or by beam search from the
     * start, its best hypothesis then replayed through the session so that the views draw its own attention. */
    run() {
      return this.act(async () => {
        const session = await this.current();
        const { strategy, beamSize } = this.searchMode();
        if (strategy === "beam") {
          session.reset();
          this.found = await beamSearch(session, beamSize);
          for (const token of [...this.found.tokens, session.model.config.eos_id]) {
            if (session.finished) break;
            await session.step(token);
          }
          this.beamed = beamSize;
        } else {
          if (session.finished) session.reset();
          await session.run();
          this.beamed = null;
        }
        this.before = null;
        this.send(full(session, this.changed(), lastWord(session)));
      });
    }
    step() {
      return this.act(async () => {
        if (this.searchMode().strategy === "beam") throw new InputError(BEAM_MODE);
        const session = await this.current();
        if (session.finished) throw new InputError(STEP_FINISHED);
        const after = this.unsent ? null : this.key();
        await session.step();
        this.beamed = null;
        const key = this.changed();
        this.send(after ? more(session, key, after, lastWord(session)) : full(session, key, lastWord(session)));
      });
    }
    back() {
      return this.act(async () => {
        if (!page.decoding || !page.decoding.steps.length) throw new InputError(NOTHING_BACK);
        const session = await this.current(false);
        if (!session.steps.length) throw new InputError(NOTHING_BACK);
        const after = this.key();
        session.back();
        this.beamed = null;
        this.send(fewer(session, this.changed(), after, lastWord(session)));
      });
    }
    reset() {
      return this.act(async () => {
        Object.assign(this, { session: null, text: null, before: null });
        receive({ op: "clear", key: null, shown: 0 });
        this.ui.wrote(this.outputs());
      });
    }
    /** What if the model had written `token` at step `shown`? Force it there and decode on greedily; the decoding
     * before is kept beside it, as the app does. */
    whatIf(token, shown) {
      return this.act(async () => {
        if (!page.decoding || !page.decoding.steps.length) throw new InputError(PICK_FIRST);
        const session = await this.current(false);
        const at = Math.max(1, Math.min(Number(shown) || 1, session.steps.length));
        if (!session.canWrite(token, at - 1)) throw new InputError(PICK_LISTED);
        const before = session.steps.slice();
        while (session.steps.length >= at) session.back();
        await session.step(token);
        await session.run();
        this.before = { tokens: before.map((s) => s.token), at };
        this.beamed = null;
        const message = full(session, this.changed(), at);
        message.data.original = original(session, before, at);
        this.send(message);
      });
    }
    /** The page's decoding as the server needs it to rebuild it (decoding/road.py): the model, the source, the
     * options, every token written and where a what-if forced one, and the decoding before it. */
    decoded() {
      const s = this.session;
      if (!s) return { key: null };
      return {
        key: this.key(),
        model: this.model.config.name,
        source: this.text,
        top_k: this.options.topK,
        max_len: this.options.maxNew,
        tokens: s.tokens,
        shown: page.shown,
        before: this.before,
        beam_size: this.beamed,
        // the decoding is a beam search's of this size: the server keeps its beams
        strategy: this.searchMode().strategy,
        // what the loop's outputs were written for (beam mode turns Step off)
        ablate: this.options.ablated || []
      };
    }
  };
  function sameSource(held, ids, model) {
    return JSON.stringify(ids.map((id) => model.label(id))) === JSON.stringify(held.src.labels);
  }

  // attention_lab/export/live.mjs
  var none = () => {
  };
  function part(name, trigger = none) {
    const element = document.querySelector(`[data-part="${name}"]`);
    const inner = document.createElement("div");
    inner.className = "lab-drawn";
    element.replaceChildren(inner);
    return { element, props: { value: null }, watch: none, trigger };
  }
  function controls2() {
    const $ = (id) => document.getElementById(id);
    const message = $("live-message");
    const ui = {
      buttons: ["lab-run", "lab-step", "lab-back", "lab-reset"].map($),
      source: () => $("lab-source").value,
      setSource: (text) => $("lab-source").value = text,
      options: () => ({ topK: 5, maxNew: null }),
      output: (text) => $("lab-output").value = text,
      status: "",
      wrote(outputs) {
        ui.output(outputs.output);
        ui.status = outputs.status;
        ui.say("");
      },
      say(text, error = false) {
        message.textContent = text || ui.status;
        message.classList.toggle("error", Boolean(text) && error);
      }
    };
    return ui;
  }
  function threads() {
    if (!globalThis.crossOriginIsolated) return 1;
    return Math.max(2, Math.min(4, Math.floor((globalThis.navigator?.hardwareConcurrency || 2) / 2)));
  }
  var opened = null;
  function open(state) {
    if (opened) return opened;
    const ui = controls2(), page2 = { live: null };
    setNames(state.names);
    mount3(part("lab-steps"));
    mount2(part("now"));
    mount(part("candidates", (event, data) => event === "select" && page2.live && page2.live.whatIf(data.token, data.shown)));
    mount4(part("views"));
    setKind(state.kind);
    setLook(state.look);
    ui.setSource(state.example);
    receive(state.first);
    ui.output(state.output);
    ui.say("Loading the model…");
    opened = { ui, page: page2 };
    return opened;
  }
  async function start(state, { ort, Tokenizer, bytes }) {
    const { ui, page: page2 } = open(state);
    ort.env.wasm.numThreads = threads();
    ort.env.wasm.wasmBinary = await bytes("ort-wasm-simd-threaded.wasm");
    const [encoder, decoder, weights2, tokenizer] = await Promise.all(
      ["encoder.onnx", "decoder.onnx", "weights.bin", "tokenizer.json"].map(bytes)
    );
    performance.mark("live:parts");
    const model = await LiveModel.load(ort, Tokenizer, {
      encoder,
      decoder,
      weights: weights2,
      tokenizer: JSON.parse(new TextDecoder().decode(tokenizer)),
      config: state.config
    });
    performance.mark("live:model");
    const live = page2.live = new Loop(model, ui);
    const settle = () => {
      document.body.dataset.steps = String(live.session ? live.session.steps.length : 0);
      document.body.dataset.busy = "false";
    };
    const after = (done) => done.then(settle);
    const [run, step, back, reset] = ui.buttons;
    run.addEventListener("click", () => after(live.run()));
    step.addEventListener("click", () => after(live.step()));
    back.addEventListener("click", () => after(live.back()));
    reset.addEventListener("click", () => after(live.reset()));
    install(document, { step: () => after(live.step()), help: () => ui.say(KEYS.map(([k, what]) => `${k}: ${what}`).join(" · ")) });
    ui.buttons.forEach((b) => b.disabled = false);
    await after(live.run());
    performance.mark("live:example");
    window.attentionLabLive = live;
    return live;
  }
  return __toCommonJS(live_exports);
})();
