// The attention views, drawn in the page from a decoding's attention as lab/attention/payload.py sends it: every
// kind, layer and head once per Run, a step at a time after. Any step, focus head, unit (pieces or words), special
// tokens hidden or not, colour scale and reading is drawn here, with plotly.js, and asks the server nothing.
//
// What is decided in Python travels with the data: which pieces form a word and every label (lab.attention.units),
// the value norms and the rollouts (transformer.readings), the candidates' labels. Here the page only applies them:
// a word's row is the mean of its pieces' rows and its column the sum of theirs; hidden special tokens are dropped
// and each row renormalised; value-weighting multiplies by the norms and takes each row's shares; cross-attention's
// rollout multiplies by the encoder's. tests/test_views_js.py holds each equal to lab.attention.units.in_units and
// transformer.readings on the same numbers.
//
// Token text reaches the page only as text: plotly gets it escaped (it renders a subset of HTML in labels), and the
// now-view and the candidates set it with textContent.
//
// Shapes: a stack is {L, H, Q, K, data: Float32Array} read as data[((l * H + h) * Q + q) * K + k].

const AttentionViews = (() => {
  "use strict";

  const SCALE = 65535;
  const LOG_FLOOR = 1e-4;
  const ROW_PX = 18; // a token row of a focus view
  const MAX_ROWS_SHOWN = 40; // a focus view taller than this pans, around the current step
  const MAX_LABEL = 16; // characters of a token shown on an axis
  const OVERVIEW_MAX_PX = 520; // every head of a kind fits on one screen
  const STYLE = {
    colorscale: [[0, "#f7fbff"], [1, "#08306b"]], // replaced by the server's (lab.attention.figures.COLORSCALE)
    highlight: "#e4572e",
    focusLine: "#222222",
  };
  const KINDS = {
    cross: {title: "Cross-attention", axes: ["output (the step that wrote it)", "source"]},
    encoder: {title: "Encoder self-attention", axes: ["source (from)", "source (to)"]},
    decoder_self: {title: "Decoder self-attention", axes: ["output (the step that wrote it)", "decoder input"]},
  };
  const READINGS = {weights: "Attention weights", value: "Value-weighted ‖α·v·W_o‖", rollout: "Rollout"};

  function configure(config) {
    Object.assign(STYLE, config.style || {});
    if (config.kinds) Object.assign(KINDS, config.kinds);
    if (config.readings) Object.assign(READINGS, config.readings);
  }

  // ---- bytes ------------------------------------------------------------------------------------------------------

  function bytes(b64) {
    const text = atob(b64);
    const out = new Uint8Array(text.length);
    for (let i = 0; i < text.length; i++) out[i] = text.charCodeAt(i);
    return out;
  }

  function weights16(b64) {
    const raw = bytes(b64);
    const out = new Float32Array(raw.length / 2);
    for (let i = 0; i < out.length; i++) out[i] = (raw[2 * i] | (raw[2 * i + 1] << 8)) / SCALE;
    return out;
  }

  function floats32(b64) {
    const raw = bytes(b64);
    const view = new DataView(raw.buffer);
    const out = new Float32Array(raw.length / 4);
    for (let i = 0; i < out.length; i++) out[i] = view.getFloat32(4 * i, true);
    return out;
  }

  // ---- the decoding -----------------------------------------------------------------------------------------------

  function decodeStep(step) {
    return {...step, cross: weights16(step.cross), self: weights16(step.self),
      selfNorms: floats32(step.self_norms), selfRollout: weights16(step.self_rollout)};
  }

  class Decoding {
    /** A decoding as the page holds it: `data` is payload.full's, and steps come and go with the messages. */
    constructor(data) {
      this.model = data.model;
      [this.Le, this.Ld] = data.layers;
      this.H = data.heads;
      this.characterLevel = data.character_level;
      this.bos = data.bos;
      this.src = data.src;
      this.out = {labels: [...data.out.labels], words: [...data.out.words], group: [...data.out.group],
        special: [...data.out.special]};
      this.S = data.src.labels.length;
      this.encoder = weights16(data.encoder);
      this.encoderNorms = floats32(data.encoder_norms);
      this.encoderRollout = weights16(data.encoder_rollout);
      this.crossNorms = data.cross_norms ? floats32(data.cross_norms) : null;
      this.steps = data.steps.map(decodeStep);
      this.revision = 0; // bumped by every change of the steps: what was worked out for an older one is stale
      this.memo = new Map();
      this.original = null;
      if (data.original) {
        this.original = {out: data.original.out, at: data.original.at, steps: data.original.cross.map(c => ({cross: weights16(c)}))};
      }
    }

    addStep(delta) {
      this.revision++;
      this.steps.push(decodeStep(delta.step));
      for (const name of ["labels", "words", "group", "special"]) this.out[name].push(delta.out[name]);
      if (delta.cross_norms) this.crossNorms = floats32(delta.cross_norms);
    }

    keep(n) {
      this.revision++;
      this.steps.length = n;
      for (const name of ["labels", "words", "group", "special"]) this.out[name].length = n;
    }

    /** What `make()` gives, worked out once per `key` (the last one kept for each `name`): another focus or colour
     * scale redraws from the weights it already has, and plotly leaves an overview whose arrays are the same. */
    remembered(name, key, make) {
      const known = this.memo.get(name);
      if (known && known.key === key && known.revision === this.revision) return known.value;
      const value = make();
      this.memo.set(name, {key, revision: this.revision, value});
      return value;
    }

    /** The decoder's inputs: the start token, then every output but the last (a special token, a word alone). */
    inputs() {
      return {labels: [this.bos, ...this.out.labels], words: [this.bos, ...this.out.words],
        group: [-1, ...this.out.group], special: [true, ...this.out.special]};
    }

    /** Piece-level weights of `kind` at step `shown` (1-based), (L, H, Q, K), and the norms of its keys (L, H, K). */
    pieces(kind, shown) {
      const {H, S} = this;
      if (kind === "encoder") return {L: this.Le, H, Q: S, K: S, data: this.encoder, norms: this.encoderNorms};
      const L = this.Ld;
      if (kind === "cross") {
        const data = new Float32Array(L * H * shown * S);
        for (let q = 0; q < shown; q++) {
          const row = this.steps[q].cross;
          for (let lh = 0; lh < L * H; lh++) data.set(row.subarray(lh * S, (lh + 1) * S), (lh * shown + q) * S);
        }
        return {L, H, Q: shown, K: S, data, norms: this.crossNorms};
      }
      const data = new Float32Array(L * H * shown * shown);
      const norms = new Float32Array(L * H * shown);
      for (let q = 0; q < shown; q++) {
        const step = this.steps[q];
        for (let lh = 0; lh < L * H; lh++) {
          data.set(step.self.subarray(lh * (q + 1), (lh + 1) * (q + 1)), (lh * shown + q) * shown);
          norms[lh * shown + q] = step.selfNorms[lh];
        }
      }
      return {L, H, Q: shown, K: shown, data, norms};
    }

    /** Rollout of a self-attention kind through each layer, (L, 1, Q, K). */
    rollout(kind, shown) {
      if (kind === "encoder") return {L: this.Le, H: 1, Q: this.S, K: this.S, data: this.encoderRollout};
      const L = this.Ld;
      const data = new Float32Array(L * shown * shown);
      for (let q = 0; q < shown; q++) {
        const row = this.steps[q].selfRollout; // (L, q + 1)
        for (let l = 0; l < L; l++) data.set(row.subarray(l * (q + 1), (l + 1) * (q + 1)), (l * shown + q) * shown);
      }
      return {L, H: 1, Q: shown, K: shown, data};
    }
  }

  // ---- units: words or pieces, specials hidden ----------------------------------------------------------------------

  /** The first `n` tokens of a sequence as units: words (pieces of one word merged) or pieces. */
  function units(seq, n, words) {
    const out = {labels: [], groups: [], special: []};
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
    u.special.forEach((s, i) => { if (!s) keep.push(i); });
    return keep;
  }

  /** Piece weights (L, H, Q, K) in units: a row per row unit (the mean of its pieces' rows), a column per column
   * unit (the sum of its pieces' columns); with `hide`, special units dropped and every row renormalised. */
  function inUnits(stack, rows, cols, hide) {
    const {L, H, Q, K, data} = stack;
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
    return {L, H, Q: R, K: C, data: out, rows: rowIdx, cols: colIdx};
  }

  // ---- readings ---------------------------------------------------------------------------------------------------

  /** Weights times the norms of their keys (norms: (L, H, K)), as each row's shares (Kobayashi et al. 2020). */
  function valueWeighted(stack, norms) {
    const {L, H, Q, K, data} = stack;
    const out = new Float32Array(data.length);
    for (let lh = 0; lh < L * H; lh++) {
      for (let q = 0; q < Q; q++) {
        let total = 0;
        const base = (lh * Q + q) * K;
        for (let k = 0; k < K; k++) total += (out[base + k] = data[base + k] * norms[lh * K + k]);
        for (let k = 0; k < K; k++) out[base + k] = total > 0 ? out[base + k] / total : 0;
      }
    }
    return {...stack, data: out};
  }

  /** Each row times a (K, K) matrix: cross-attention carried through the encoder's rollout. */
  function through(stack, matrix) {
    const {L, H, Q, K, data} = stack;
    const out = new Float32Array(data.length);
    for (let row = 0; row < L * H * Q; row++) {
      for (let j = 0; j < K; j++) {
        let sum = 0;
        for (let k = 0; k < K; k++) sum += data[row * K + k] * matrix[k * K + j];
        out[row * K + j] = sum;
      }
    }
    return {...stack, data: out};
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

  // ---- the weights a view draws -------------------------------------------------------------------------------------

  /** (L, H, Q, K) in the look's units and reading, its row and column units, and the row of step `shown`. */
  function weights(decoding, kind, shown, look) {
    const key = [kind, shown, look.words, look.hideSpecials, look.reading].join("|");
    return decoding.remembered(`weights:${kind}`, key, () => computeWeights(decoding, kind, shown, look));
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
    let current = rows.groups.findIndex(g => g.includes(rowPiece));
    current = current < 0 ? null : current;
    if (look.hideSpecials) current = merged.rows.includes(current) ? merged.rows.indexOf(current) : null;
    const pick = (u, idx) => ({labels: idx.map(i => u.labels[i]), groups: idx.map(i => u.groups[i])});
    return {stack: merged, rows: pick(rows, merged.rows), cols: pick(cols, merged.cols), current};
  }

  /** The focused head's (Q, K), or the mean of all heads, and its name; a rollout (L, 1, Q, K) shows one layer. */
  function head(stack, focus, rolled) {
    const {L, H, Q, K, data} = stack;
    if (rolled) {
      const layer = focus ? Math.min(focus[0], L - 1) : L - 1;
      return {z: data.subarray(layer * Q * K, (layer + 1) * Q * K), Q, K, name: `rollout through layer ${layer + 1}`};
    }
    if (focus && focus[0] < L && focus[1] < H) {
      const lh = focus[0] * H + focus[1];
      return {z: data.subarray(lh * Q * K, (lh + 1) * Q * K), Q, K, name: `layer ${focus[0] + 1}, head ${focus[1] + 1}`};
    }
    const mean = new Float32Array(Q * K);
    for (let lh = 0; lh < L * H; lh++) for (let i = 0; i < Q * K; i++) mean[i] += data[lh * Q * K + i] / (L * H);
    return {z: mean, Q, K, name: "mean of all heads"};
  }

  // ---- colour -----------------------------------------------------------------------------------------------------

  function scaled(z, Q, K, scale) {
    const out = new Float32Array(Q * K);
    for (let q = 0; q < Q; q++) {
      let top = 0;
      if (scale === "row") for (let k = 0; k < K; k++) top = Math.max(top, z[q * K + k]);
      for (let k = 0; k < K; k++) {
        const w = z[q * K + k];
        out[q * K + k] = scale === "log" ? Math.log10(Math.max(w, LOG_FLOOR)) : scale === "row" ? (top > 0 ? w / top : 0) : w;
      }
    }
    return out;
  }

  /** A weight's colour as a share of the scale, 0 to 1 (the now-view's shading). */
  function unit(value, scale) {
    return scale === "log" ? (value - Math.log10(LOG_FLOOR)) / -Math.log10(LOG_FLOOR) : value;
  }

  function colourAxis(look) {
    const quantity = {value: "value-weighted share", rollout: "rollout share"}[look.reading] || "weight";
    const what = look.hideSpecials ? `renormalised ${quantity}` : quantity;
    let bar = {title: {text: what}}, low = 0, high = 1;
    if (look.scale === "log") {
      const ticks = [-4, -3, -2, -1, 0];
      bar = {title: {text: `${what} (log)`}, tickvals: ticks, ticktext: ["0.0001", "0.001", "0.01", "0.1", "1"]};
      low = Math.log10(LOG_FLOOR);
      high = 0;
    } else if (look.scale === "row") {
      bar = {title: {text: `${what} / row max`}};
    }
    return {colorscale: STYLE.colorscale, cmin: low, cmax: high, colorbar: {...bar, thickness: 12}};
  }

  // ---- labels -----------------------------------------------------------------------------------------------------

  function escapeToken(token) {
    if (!token) return "∅";
    return token.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
  }

  /** Labels made unique (repeats get trailing zero-width spaces), so a categorical axis keeps them apart. */
  function unique(labels) {
    const seen = new Map();
    return labels.map(text => {
      const n = seen.get(text) || 0;
      seen.set(text, n + 1);
      return text + "\u200b".repeat(n);
    });
  }

  function axisLabels(tokens) {
    return unique(tokens.map(t => escapeToken([...t].length <= MAX_LABEL ? t : [...t].slice(0, MAX_LABEL - 1).join("") + "…")));
  }

  function labelPx(labels, perChar = 6.5) {
    const longest = Math.max(1, ...labels.map(l => [...l.replace(/\u200b+$/, "")].length));
    return Math.floor(perChar * longest) + 14;
  }

  function rounded(z, Q, K) {
    const rows = [];
    for (let q = 0; q < Q; q++) {
      const row = new Array(K);
      for (let k = 0; k < K; k++) row[k] = Math.round(z[q * K + k] * 1000) / 1000;
      rows.push(row);
    }
    return rows;
  }

  // ---- figures ----------------------------------------------------------------------------------------------------

  function outline(x0, x1, y0, y1, colour, width) {
    return {type: "rect", x0, x1, y0, y1, line: {color: colour, width}};
  }

  function emptyFigure(message, height = 160) {
    const hidden = {visible: false};
    return {data: [], layout: {height, xaxis: hidden, yaxis: hidden, plot_bgcolor: "white",
      annotations: [{text: escapeToken(message), showarrow: false, font: {size: 14, color: "#555"}}],
      margin: {l: 10, r: 10, t: 10, b: 10}}};
  }

  /** Every head (L, H) tiled into one array with null gaps between them, in the colour scale. */
  function tiles(stack, scale) {
    const {L, H, Q, K, data} = stack;
    const gapQ = Math.max(1, Math.round(0.12 * Q)), gapK = Math.max(1, Math.round(0.12 * K));
    const rows = L * (Q + gapQ) - gapQ, cols = H * (K + gapK) - gapK;
    const z = [];
    for (let r = 0; r < rows; r++) z.push(new Array(cols).fill(null));
    for (let l = 0; l < L; l++) {
      for (let h = 0; h < H; h++) {
        const top = l * (Q + gapQ), left = h * (K + gapK);
        const block = scaled(data.subarray((l * H + h) * Q * K, (l * H + h + 1) * Q * K), Q, K, scale);
        for (let q = 0; q < Q; q++) for (let k = 0; k < K; k++) z[top + q][left + k] = Math.round(block[q * K + k] * 1000) / 1000;
      }
    }
    const ticksX = [...Array(H).keys()].map(h => h * (K + gapK) + (K - 1) / 2);
    const ticksY = [...Array(L).keys()].map(l => l * (Q + gapQ) + (Q - 1) / 2);
    return {z, ticksX, ticksY, rows, cols, gapQ, gapK};
  }

  /** The outlines of the current row in every tile (one path of L·H rectangles: plotly draws a shape at a time,
   * and a model of 12 layers and 16 heads would have 192) and of the focused head's tile. */
  function tileShapes(stack, t, row, focus) {
    const {L, H, Q, K} = stack;
    const shapes = [];
    if (row !== null && row >= 0 && row < Q) {
      let path = "";
      for (let l = 0; l < L; l++) {
        for (let h = 0; h < H; h++) {
          const top = l * (Q + t.gapQ) + row, left = h * (K + t.gapK);
          path += `M${left - 0.5},${top - 0.5}H${left + K - 0.5}V${top + 0.5}H${left - 0.5}Z`;
        }
      }
      shapes.push({type: "path", path, line: {color: STYLE.highlight, width: 1}});
    }
    if (focus && focus[0] < L && focus[1] < H) {
      const top = focus[0] * (Q + t.gapQ), left = focus[1] * (K + t.gapK);
      shapes.push(outline(left - 0.5, left + K - 0.5, top - 0.5, top + Q - 0.5, STYLE.focusLine, 2.5));
    }
    return shapes;
  }

  function spikes() {
    return {showspikes: true, spikemode: "across", spikethickness: 1, spikecolor: STYLE.highlight, spikedash: "solid"};
  }

  /** One kind of attention in one figure: every head as small multiples (layers down, heads across) in one tiled
   * trace on top, and the focused head large below with its tokens on the axes; the current step outlined. */
  function kindFigure(stack, focused, look, title, row, axes, grid = null) {
    const t = grid || tiles(stack, look.scale);
    const {Q, K} = focused;
    const ys = axisLabels(focused.rows), xs = axisLabels(focused.cols);
    const overviewPx = Math.floor(Math.max(90, Math.min(1000 / t.cols, OVERVIEW_MAX_PX / t.rows, 22) * t.rows));
    const labelsPx = Math.min(labelPx(xs, 4.6), 110) + 46;
    const shown = Math.min(Q, MAX_ROWS_SHOWN);
    const focusPx = ROW_PX * shown;
    const area = overviewPx + labelsPx + focusPx;
    // No hover on the overview (a click on a tile is read from its position, lab/assets/page.js): plotly then has
    // nothing to redo under a still pointer when the figure is redrawn.
    const tilesTrace = {type: "heatmap", z: t.z, coloraxis: "coloraxis", hoverinfo: "skip"};
    const hover = `${axes[0]}: %{y}<br>${axes[1]}: %{x}<br>weight: %{customdata:.3f}<extra></extra>`;
    const custom = [];
    for (let q = 0; q < Q; q++) custom.push(Array.from(focused.z.subarray(q * K, (q + 1) * K), v => Math.round(v * 10000) / 10000));
    const large = {type: "heatmap", z: rounded(scaled(focused.z, Q, K, look.scale), Q, K), customdata: custom, x: xs, y: ys,
      xaxis: "x2", yaxis: "y2", coloraxis: "coloraxis", hovertemplate: hover};
    const plain = {showgrid: false, zeroline: false};
    let rowsAxis = {type: "category", autorange: "reversed", tickfont: {size: 11}, domain: [0, focusPx / area]};
    if (Q > shown) {
      const first = row === null ? 0 : Math.min(Math.max(0, row - Math.floor(shown / 2)), Q - shown);
      rowsAxis = {...rowsAxis, autorange: false, range: [first + shown - 0.5, first - 0.5]};
    }
    const shapes = tileShapes(stack, t, row, look.focus);
    if (row !== null && row >= 0 && row < Q) shapes.push({...outline(-0.5, K - 0.5, row - 0.5, row + 0.5, STYLE.highlight, 2), xref: "x2", yref: "y2"});
    const layout = {
      title: {text: title, font: {size: 12}, y: 1, yanchor: "top", pad: {t: 8}},
      height: area + 94,
      margin: {l: Math.min(labelPx(ys), 140) + 30, r: 10, t: 74, b: 20},
      coloraxis: colourAxis(look),
      plot_bgcolor: "white",
      xaxis: {...plain, tickvals: t.ticksX, ticktext: t.ticksX.map((_, h) => `head ${h + 1}`), side: "top"},
      yaxis: {...plain, tickvals: t.ticksY, ticktext: t.ticksY.map((_, l) => `layer ${l + 1}`), autorange: "reversed",
        domain: [(focusPx + labelsPx) / area, 1]},
      xaxis2: {type: "category", side: "top", tickangle: -45, anchor: "y2", ...spikes()},
      yaxis2: {...rowsAxis, anchor: "x2", ...spikes(), title: {text: focused.name, standoff: 4}},
      shapes,
      dragmode: "pan",
      hovermode: "closest",
      modebar: {orientation: "v"},
    };
    return {data: [tilesTrace, large], layout};
  }

  /** One kind of attention at step `shown`, as the look asks: the figure kindFigure draws, or why there is none. */
  function view(decoding, kind, shown, look) {
    if (kind !== "encoder" && !shown) return emptyFigure("Nothing written yet: Step or Run to decode.");
    const w = weights(decoding, kind, shown, look);
    if (!w.rows.labels.length || !w.cols.labels.length) {
      return emptyFigure("Only special tokens here; untick “Hide special tokens” to see them.");
    }
    const rolled = look.reading === "rollout" && kind !== "cross";
    const chosen = head(w.stack, look.focus, rolled);
    const focused = {...chosen, rows: w.rows.labels, cols: w.cols.labels};
    const overview = rolled ? "Rollout through each layer (heads averaged): layers down" : "Every head: layers down, heads across";
    const reading = look.reading !== "weights" ? ` (${READINGS[look.reading]})` : "";
    const title = `${overview}${reading}<br>Below: ${chosen.name}`;
    const key = [kind, shown, look.words, look.hideSpecials, look.reading, look.scale].join("|");
    const grid = decoding.remembered(`tiles:${kind}`, key, () => tiles(w.stack, look.scale));
    return kindFigure(w.stack, focused, look, title, w.current, KINDS[kind].axes, grid);
  }

  /** The decoding before a what-if, ablation or edit, beside this one: the cross-attention of each (focused head,
   * attention weights whatever the reading), the changed step outlined in both. */
  function compare(decoding, look) {
    const original = decoding.original;
    if (!original || !decoding.steps.length) return null;
    const plain = {...look, reading: "weights"};
    const before = Object.create(Decoding.prototype);
    Object.assign(before, decoding, {out: original.out, steps: original.steps, memo: new Map()});
    const left = weights(before, "cross", original.steps.length, plain);
    const right = weights(decoding, "cross", decoding.steps.length, plain);
    const outputUnits = units(decoding.out, decoding.steps.length, look.words);
    const at = Math.max(0, outputUnits.groups.findIndex(g => g.includes(original.at - 1)));
    const xs = axisLabels(left.cols.labels);
    const data = [], shapes = [];
    [[left, "original"], [right, "what-if"]].forEach(([side, label], i) => {
      const suffix = i === 0 ? "" : "2";
      const chosen = head(side.stack, look.focus, false);
      data.push({type: "heatmap", z: rounded(chosen.z, chosen.Q, chosen.K), x: xs,
        y: axisLabels(side.rows.labels).map((t, n) => `${label} ${n + 1}: ${t}`), xaxis: `x${suffix}`, yaxis: `y${suffix}`,
        coloraxis: "coloraxis", hovertemplate: "%{y} → %{x}<br>weight: %{z:.3f}<extra></extra>"});
      shapes.push({...outline(-0.5, xs.length - 0.5, at - 0.5, at + 0.5, STYLE.highlight, 2), xref: `x${suffix}`, yref: `y${suffix}`});
    });
    const category = {type: "category", side: "top", tickangle: -45};
    const rowsAxis = {type: "category", autorange: "reversed", tickfont: {size: 10}};
    const side = Math.min(labelPx([...data[0].y, ...data[1].y], 6), 180);
    const top = Math.min(labelPx(xs, 4.6), 110) + 30;
    const n = Math.min(Math.max(data[0].y.length, data[1].y.length), MAX_ROWS_SHOWN);
    return {data, layout: {height: ROW_PX * n + top + 20, margin: {l: side, r: 10, t: top, b: 10},
      coloraxis: colourAxis({scale: "linear", reading: "weights", hideSpecials: false}),
      xaxis: {...category, domain: [0, 0.4]}, xaxis2: {...category, domain: [0.6, 1], anchor: "y2"},
      yaxis: rowsAxis, yaxis2: {...rowsAxis, anchor: "x2"}, shapes, plot_bgcolor: "white"}};
  }

  // ---- the step's own views: what it looked at, and its next-token candidates ----------------------------------------

  function shade(weight) {
    return {background: `rgba(8, 81, 156, ${weight.toFixed(3)})`, color: weight > 0.55 ? "#fff" : "#111"};
  }

  /** Every head's row of `kind` at step `shown` (its own piece row: a word's other pieces are other steps), its
   * columns in the look's units and reading, specials dropped and renormalised with `hideSpecials`: (L, H, 1, C). */
  function stepRow(decoding, kind, shown, look) {
    const cols = kind === "cross" ? units(decoding.src, decoding.S, look.words) : units(decoding.inputs(), shown, look.words);
    const one = {labels: ["·"], groups: [[0]], special: [false]};
    const all = read(decoding, kind, shown, look.reading);
    const {L, H, Q, K} = all, row = new Float32Array(L * H * K);
    for (let lh = 0; lh < L * H; lh++) row.set(all.data.subarray((lh * Q + shown - 1) * K, (lh * Q + shown) * K), lh * K);
    const merged = inUnits({...all, Q: 1, data: row}, one, cols, look.hideSpecials);
    return {stack: merged, labels: merged.cols.map(c => cols.labels[c]), groups: merged.cols.map(c => cols.groups[c])};
  }

  /** This step's cross-attention over the source words, as plain data: heading parts, words with weights. */
  function now(decoding, shown, look) {
    if (!shown) return {empty: true};
    const step = decoding.steps[shown - 1];
    const row = stepRow(decoding, "cross", shown, look);
    const chosen = head(row.stack, look.focus, false);
    const shades = scaled(chosen.z, 1, row.stack.K, look.scale);
    const words = row.labels.map((label, i) => ({label, weight: chosen.z[i], shade: unit(shades[i], look.scale),
      pieces: row.groups[i]}));
    return {empty: false, step: shown, token: step.label, forced: step.forced, name: chosen.name, words, hidden: look.hideSpecials};
  }

  function renderNow(container, state) {
    container.replaceChildren();
    const box = document.createElement("div");
    box.className = "now-view";
    container.appendChild(box);
    if (state.empty) {
      box.append("Step 0: nothing written yet. ");
      const b = document.createElement("b");
      b.textContent = "Step";
      box.append(b, " writes the first token.");
      return;
    }
    const heading = document.createElement("div");
    heading.className = "now-heading";
    const token = document.createElement("b");
    token.textContent = state.token || "∅";
    heading.append(`Step ${state.step} wrote `, token, `${state.forced ? " (forced by a what-if)" : ""}, looking at the source like this (${state.name}):`);
    const words = document.createElement("div");
    words.className = "words";
    state.words.forEach((w, i) => {
      if (i) words.append(" ");
      const span = document.createElement("span");
      span.className = "word";
      const colours = shade(Math.max(0, Math.min(1, w.shade)));
      span.style.background = colours.background;
      span.style.color = colours.color;
      span.title = `weight ${w.weight.toFixed(3)}`;
      span.dataset.pieces = w.pieces.join(",");
      span.textContent = w.label;
      words.appendChild(span);
    });
    const note = document.createElement("div");
    note.className = "now-note";
    note.textContent = "Darker words got more attention; hover a word for its weight." + (state.hidden ? " Special tokens hidden, weights renormalised." : "");
    box.append(heading, words, note);
  }

  function renderCandidates(container, decoding, shown) {
    container.replaceChildren();
    const list = document.createElement("div");
    list.className = "candidates";
    container.appendChild(list);
    if (!shown) return;
    const step = decoding.steps[shown - 1];
    for (const [label, id, prob, percent] of step.top) {
      const row = document.createElement("button");
      row.type = "button";
      row.className = "candidate" + (id === step.token ? " taken" : "");
      row.dataset.token = String(id);
      const bar = document.createElement("span");
      bar.className = "bar";
      bar.style.width = `${(100 * prob).toFixed(1)}%`;
      const text = document.createElement("span");
      text.className = "label";
      text.textContent = label;
      const value = document.createElement("span");
      value.className = "value";
      value.textContent = percent;
      row.append(bar, text, value);
      list.appendChild(row);
    }
  }

  // ---- why this token: attribution beside attention, each head's agreement, the decoder's lens ---------------------

  /** Ranks from 1, ties given their mean rank. */
  function ranks(values) {
    const order = values.map((v, i) => i).sort((a, b) => values[a] - values[b]);
    const out = new Array(values.length);
    for (let i = 0; i < order.length;) {
      let j = i;
      while (j + 1 < order.length && values[order[j + 1]] === values[order[i]]) j++;
      for (let k = i; k <= j; k++) out[order[k]] = (i + j) / 2 + 1;
      i = j + 1;
    }
    return out;
  }

  /** Spearman's rank correlation of two equal-length lists; null where it is undefined (fewer than two values, or
   * one list constant). */
  function spearman(a, b) {
    const n = a.length;
    if (n < 2 || b.length !== n) return null;
    const ra = ranks(a), rb = ranks(b);
    const mean = (n + 1) / 2;
    let num = 0, da = 0, db = 0;
    for (let i = 0; i < n; i++) {
      num += (ra[i] - mean) * (rb[i] - mean);
      da += (ra[i] - mean) ** 2;
      db += (rb[i] - mean) ** 2;
    }
    return da > 0 && db > 0 ? num / Math.sqrt(da * db) : null;
  }

  /** Values per piece summed into the units a view shows (groups of pieces). */
  function summed(values, groups) {
    return groups.map(g => g.reduce((total, i) => total + (values[i] || 0), 0));
  }

  /** Per head (L, H), the rank correlation of its attention at this step (`row`: stepRow's) with the attribution of
   * the same units; null where the head or the attribution has no order. */
  function agreement(row, values) {
    const {L, H, K, data} = row.stack;
    const grid = [];
    for (let l = 0; l < L; l++) {
      const cells = [];
      for (let h = 0; h < H; h++) cells.push(spearman(Array.from(data.subarray((l * H + h) * K, (l * H + h + 1) * K)), values));
      grid.push(cells);
    }
    return grid;
  }

  /** What the Why tab draws at step `shown` from the page's decoding and the server's `message` (lab.why.tab): the
   * written token, the source and prefix units with their attribution, the now-view's attention, each head's
   * agreement, and the lens. Words merge as the attention views do: a word's attribution is its pieces' sum. */
  function why(decoding, message, shown, look) {
    if (!shown) return {empty: "Nothing written yet: Step or Run, and each written token is explained here."};
    const record = message.steps[shown - 1], step = decoding.steps[shown - 1];
    if (message.error) return {empty: message.error};
    if (!record || message.tokens[shown - 1] !== step.token) return {empty: "Attributing this step…"};
    const cross = stepRow(decoding, "cross", shown, look), self = stepRow(decoding, "decoder_self", shown, look);
    const source = summed(record.source, cross.groups), prefix = summed(record.prefix, self.groups);
    const top = Math.max(1e-12, ...source.map(Math.abs), ...prefix.map(Math.abs));
    const unitsOf = (labels, values, groups) => labels.map((label, i) => ({label, value: values[i], shade: values[i] / top,
      pieces: groups[i]}));
    const state = {empty: false, step: shown, token: step.label, prob: step.prob, forced: step.forced,
      title: message.title, notes: message.notes, share: record.source_share,
      source: unitsOf(cross.labels, source, cross.groups),
      prefix: unitsOf(self.labels, prefix, self.groups),
      attention: now(decoding, shown, look),
      agreement: {cross: agreement(cross, source), decoder_self: agreement(self, prefix)}};
    if (record.gap !== undefined && record.gap !== null) state.gap = {total: record.total, change: record.total - record.gap, gap: record.gap};
    return state;
  }

  function shadeSigned(share) {
    const a = Math.min(1, Math.abs(share));
    const colour = share >= 0 ? `rgba(8, 81, 156, ${a.toFixed(3)})` : `rgba(203, 24, 29, ${a.toFixed(3)})`;
    return {background: colour, color: a > 0.55 ? "#fff" : "#111"};
  }

  function wordRow(label, words, shadeOf, titleOf) {
    const row = document.createElement("div");
    row.className = "why-row";
    const name = document.createElement("div");
    name.className = "why-label";
    name.textContent = label;
    const list = document.createElement("div");
    list.className = "words";
    words.forEach((w, i) => {
      if (i) list.append(" ");
      const span = document.createElement("span");
      span.className = "word";
      Object.assign(span.style, shadeOf(w));
      span.title = titleOf(w);
      span.textContent = w.label;
      list.appendChild(span);
    });
    row.append(name, list);
    return row;
  }

  /** The Why tab's words and lines (its figures are drawn by agreementFigure and lensFigure). */
  function renderWhy(container, state) {
    container.replaceChildren();
    const box = document.createElement("div");
    box.className = "why-view";
    container.appendChild(box);
    if (state.empty) {
      box.textContent = state.empty;
      return;
    }
    const heading = document.createElement("div");
    heading.className = "why-heading";
    const token = document.createElement("b");
    token.textContent = state.token || "∅";
    heading.append(`Step ${state.step} wrote `, token, ` (p = ${state.prob.toFixed(3)}${state.forced ? ", forced by a what-if" : ""}). Why?`);
    const note = document.createElement("div");
    note.className = "why-note";
    note.textContent = `${state.notes.method} ${state.notes.words}`;
    const value = w => `${state.title}: ${w.value.toFixed(4)}`;
    const attention = state.attention.words || [];
    const share = state.share === null ? "" : `The source has ${(100 * state.share).toFixed(0)}% of the attribution, the prefix ${(100 * (1 - state.share)).toFixed(0)}%.`;
    const lines = document.createElement("div");
    lines.className = "why-note";
    lines.textContent = share;
    if (state.gap) {
      const {total, change, gap} = state.gap;
      const part = Math.abs(change) > 1e-9 ? ` (${(100 * Math.abs(gap / change)).toFixed(0)}% of it)` : "";
      lines.textContent += ` Completeness: the values add up to ${total.toFixed(3)}, log p changed by ${change.toFixed(3)} from the baseline: a gap of ${gap.toFixed(3)}${part}.`;
    }
    box.append(heading, note,
      wordRow(`Source, by ${state.title.toLowerCase()}`, state.source, w => shadeSigned(w.shade), value),
      wordRow(`Source, by attention (${state.attention.name})`, attention, w => shadeSigned(Math.max(0, Math.min(1, w.shade))),
        w => `weight ${w.weight.toFixed(3)}`),
      wordRow(`Prefix, by ${state.title.toLowerCase()}`, state.prefix, w => shadeSigned(w.shade), value),
      lines);
  }

  /** Each head's agreement with the attribution, layers down and heads across; a click on a head focuses it. */
  function agreementFigure(grid, title, focus) {
    const L = grid.length, H = L ? grid[0].length : 0;
    const text = grid.map(row => row.map(v => (v === null ? "" : v.toFixed(2))));
    const shapes = focus && focus[0] < L && focus[1] < H
      ? [outline(focus[1] - 0.5, focus[1] + 0.5, focus[0] - 0.5, focus[0] + 0.5, STYLE.focusLine, 2.5)] : [];
    return {data: [{type: "heatmap", z: grid, text, texttemplate: H <= 8 ? "%{text}" : "", zmin: -1, zmax: 1,
      colorscale: [[0, "#cb181d"], [0.5, "#f7f7f7"], [1, "#08519c"]], colorbar: {thickness: 10, title: {text: "ρ"}},
      hovertemplate: "layer %{y}, head %{x}<br>agreement ρ = %{z:.2f}<extra></extra>",
      x: [...Array(H).keys()], y: [...Array(L).keys()]}],
    layout: {title: {text: title, font: {size: 12}}, height: Math.max(150, 26 * L + 80), margin: {l: 60, r: 10, t: 40, b: 30},
      xaxis: {tickvals: [...Array(H).keys()], ticktext: [...Array(H).keys()].map(h => `h${h + 1}`), showgrid: false, zeroline: false},
      yaxis: {tickvals: [...Array(L).keys()], ticktext: [...Array(L).keys()].map(l => `layer ${l + 1}`), autorange: "reversed",
        showgrid: false, zeroline: false}, shapes, plot_bgcolor: "white"}};
  }

  /** The decoder's lens: layers down, steps across; a cell's colour is the probability that layer's state gives the
   * token written, its text the token that layer would write, its hover the top few; the layer where the written
   * token settles is outlined, and the shown step's column. Wider than `room` (px) when its steps need it: its
   * container then scrolls sideways. */
  function lensFigure(decoding, lens, shown, room = 0) {
    const T = Math.min(lens.top.length, decoding.steps.length), L = lens.layers; // after Back, the steps it has
    const z = [], text = [], hover = [];
    for (let l = 0; l < L; l++) {
      z.push(lens.written.slice(0, T).map(row => row[l]));
      text.push(lens.top.slice(0, T).map(row => escapeToken(row[l][0][0])));
      hover.push(lens.top.slice(0, T).map(row => row[l].map(([t, p]) => `${escapeToken(t)} ${p.toFixed(3)}`).join("<br>")));
    }
    const xs = axisLabels(decoding.out.labels.slice(0, T)).map((t, i) => `${i + 1}: ${t}`);
    const shapes = lens.settled.slice(0, T).map((s, t) => (s === null ? null : outline(t - 0.5, t + 0.5, s - 1.5, s - 0.5, STYLE.focusLine, 2)))
      .filter(Boolean);
    if (shown) shapes.push(outline(shown - 1.5, shown - 0.5, -0.5, L - 0.5, STYLE.highlight, 2));
    const need = 44 * T + 130;
    return {data: [{type: "heatmap", z, text, customdata: hover, texttemplate: "%{text}",
      textfont: {size: 10}, x: xs, y: [...Array(L).keys()].map(l => `layer ${l + 1}`), zmin: 0, zmax: 1,
      colorscale: STYLE.colorscale, colorbar: {thickness: 10, title: {text: "p(written)"}},
      hovertemplate: "step %{x}, after %{y}<br>p(written) = %{z:.3f}<br>top:<br>%{customdata}<extra></extra>"}],
    layout: {title: {text: "The decoder's lens: what each layer would write<br>(outlined: where the written token settles)",
      font: {size: 12}, x: 0, xanchor: "left"}, height: Math.max(170, 30 * L + 140), margin: {l: 60, r: 10, t: 50, b: 90},
      ...(need > room ? {width: need} : {}),
      xaxis: {type: "category", tickangle: -45}, yaxis: {type: "category", autorange: "reversed"}, shapes,
      plot_bgcolor: "white"}};
  }

  return {configure, Decoding, units, inUnits, valueWeighted, through, read, weights, head, view, compare, now,
    renderNow, renderCandidates, weights16, floats32, kindFigure, colourAxis, scaled, escapeToken, unique, axisLabels,
    emptyFigure, KINDS, MAX_LABEL, MAX_ROWS_SHOWN, ranks, spearman, stepRow, why, renderWhy, agreementFigure, lensFigure};
})();

if (typeof module !== "undefined") module.exports = AttentionViews;
