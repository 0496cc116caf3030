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

  // attention_lab/survey/report.mjs
  var report_exports = {};
  __export(report_exports, {
    pruningFigure: () => pruningFigure,
    start: () => start
  });

  // attention_lab/assets/labels.mjs
  function escapeToken(token) {
    if (!token) return "∅";
    return token.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
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

  // attention_lab/assets/look.mjs
  var BLUES = ["#f7fbff", "#deebf7", "#c6dbef", "#9ecae1", "#6baed6", "#4292c6", "#2171b5", "#08519c", "#08306b"];
  var STYLE = {
    colorscale: BLUES.map((colour, i) => [i / (BLUES.length - 1), colour]),
    highlight: "#e4572e",
    // the current step, everywhere
    focusLine: "#222222"
    // the focused head's tile in the grid
  };
  function focusLabel(layer, head) {
    return `Layer ${layer + 1} · Head ${head + 1}`;
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
    const layout = fig.message === void 0 ? fig.layout : { ...fig.layout, annotations: [messageAt(fig.message, container)] };
    globalThis.Plotly.react(gd, fig.data, { ...layout, autosize: true }, CONFIG);
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

  // attention_lab/core/grids.mjs
  function short(value, colouring) {
    if (colouring === "share") return `${Math.round(100 * value)}%`;
    const sign = colouring === "signed" && value > 0 ? "+" : value < 0 ? "-" : "";
    const size = Math.abs(value);
    if (size === 0) return "0";
    if (size < 1e-3) return sign + size.toExponential(1);
    if (size < 0.1) return sign + size.toFixed(3);
    return sign + (size < 10 ? size.toFixed(2) : size.toFixed(0));
  }
  function metricTrace(data, metric, yaxis, written) {
    const { kinds, layers, heads } = data;
    const width = kinds.length * (heads + 1) - 1;
    const z = [], text = [], where = [];
    for (let l = 0; l < layers; l++) {
      z.push(new Array(width).fill(null));
      text.push(new Array(width).fill(""));
      where.push(new Array(width).fill(null));
    }
    let top = 0;
    kinds.forEach((kind, b) => {
      const grid = metric.grids[kind];
      grid.forEach((row, l) => row.forEach((value, h) => {
        if (value === null) return;
        const x = b * (heads + 1) + h;
        z[l][x] = value;
        text[l][x] = short(value, metric.colouring);
        where[l][x] = `${kind}|${focusLabel(l, h)}`;
        top = Math.max(top, Math.abs(value));
      }));
    });
    if (metric.colouring === "share" || top === 0) top = metric.colouring === "share" ? 1 : 1e-9;
    const signed = metric.colouring === "signed";
    return {
      type: "heatmap",
      z,
      text,
      texttemplate: written ? "%{text}" : "",
      textfont: { size: 10 },
      customdata: where,
      colorscale: signed ? [[0, "#2166ac"], [0.5, "#f7f7f7"], [1, "#b2182b"]] : STYLE.colorscale,
      zmin: signed ? -top : 0,
      zmax: top,
      showscale: false,
      xaxis: "x",
      yaxis,
      xgap: 1,
      ygap: 1,
      hovertemplate: `%{customdata}<br>${escapeToken(metric.name)}: %{z:.3f}<extra></extra>`
    };
  }
  var CELL_PX = 30;
  var TEXT_CELL_PX = 34;
  var CHAR_PX = 6.2;
  var LINE_PX = 14;
  var GAP_PX = 14;
  function summaryFigure(data, width = 720) {
    const { kinds, layers, heads, metrics } = data;
    const margin = { l: 40, r: 10, b: 10 };
    const columns = kinds.length * (heads + 1) - 1, inner = Math.max(120, width - margin.l - margin.r);
    const written = inner / columns >= TEXT_CELL_PX;
    const chars = Math.max(16, Math.floor(inner / CHAR_PX));
    const notes = metrics.map((metric) => {
      const lines = wrapped(`${metric.name}: ${metric.note}`, chars), name = escapeToken(metric.name);
      if (lines[0].startsWith(name)) lines[0] = `<b>${name}</b>${lines[0].slice(name.length)}`;
      return lines;
    });
    const rowPx = layers * CELL_PX;
    const total = notes.reduce((sum, lines) => sum + lines.length * LINE_PX + 4 + rowPx + GAP_PX, 0);
    const traces = [], layout = {}, annotations = [];
    let below = 0;
    metrics.forEach((metric, i) => {
      const suffix = i === 0 ? "" : String(i + 1);
      traces.push(metricTrace(data, metric, `y${suffix}`, written));
      below += notes[i].length * LINE_PX + 4;
      const top = 1 - below / total;
      below += rowPx;
      layout[`yaxis${suffix}`] = {
        domain: [1 - below / total, top],
        tickvals: [...Array(layers).keys()],
        ticktext: [...Array(layers).keys()].map((l) => `L${l + 1}`),
        autorange: "reversed",
        showgrid: false,
        zeroline: false,
        anchor: "x",
        fixedrange: true
      };
      annotations.push({
        text: notes[i].join("<br>"),
        xref: "paper",
        yref: "paper",
        x: 0,
        y: top,
        yanchor: "bottom",
        xanchor: "left",
        align: "left",
        showarrow: false,
        font: { size: 11 }
      });
      below += GAP_PX;
    });
    kinds.forEach((kind, b) => annotations.push({
      text: escapeToken(data.short[kind]),
      xref: "x",
      yref: "paper",
      x: b * (heads + 1) + (heads - 1) / 2,
      y: 1,
      yanchor: "bottom",
      yshift: 22,
      showarrow: false,
      font: { size: 12 }
    }));
    const ticks = [...Array(kinds.length * (heads + 1)).keys()].filter((x) => x % (heads + 1) < heads);
    const title = wrapped(data.title, Math.floor(inner / 7));
    annotations.push({
      name: "title",
      text: title.join("<br>"),
      xref: "paper",
      yref: "paper",
      x: 0,
      xshift: 4 - margin.l,
      y: 1,
      yshift: 42,
      xanchor: "left",
      yanchor: "bottom",
      align: "left",
      showarrow: false,
      font: { size: 12 }
    });
    margin.t = title.length * 15 + 52;
    return { data: traces, layout: {
      ...layout,
      height: total + margin.t + margin.b,
      margin,
      plot_bgcolor: "white",
      annotations,
      hovermode: "closest",
      dragmode: false,
      xaxis: {
        tickvals: ticks,
        ticktext: ticks.map((x) => `h${x % (heads + 1) + 1}`),
        side: "top",
        anchor: "free",
        position: 1,
        showgrid: false,
        zeroline: false,
        range: [-0.5, columns - 0.5],
        fixedrange: true
      }
    } };
  }

  // attention_lab/survey/report.mjs
  var COLOURS = { all: "#222222", encoder: "#1f77b4", decoder_self: "#2ca02c", cross: "#d62728" };
  var NAMES = {
    all: "all heads",
    encoder: "encoder self heads only",
    decoder_self: "decoder self heads only",
    cross: "cross heads only"
  };
  function pruningFigure(survey) {
    const name = escapeToken(survey.score.name);
    const lines = { all: survey.pruning, ...survey.pruning_by_kind };
    const data = Object.entries(lines).map(([kind, points]) => {
      const total = points[points.length - 1].heads || 1;
      return {
        type: "scatter",
        mode: "lines+markers",
        name: `${NAMES[kind]} (${total})`,
        x: points.map((p) => Math.round(1e3 * p.heads / total) / 10),
        y: points.map((p) => p.score),
        customdata: points.map((p) => p.heads),
        line: { color: COLOURS[kind], width: kind === "all" ? 3 : 2 },
        hovertemplate: `%{customdata} heads pruned (%{x}%)<br>${name} %{y:.2f}<extra>${NAMES[kind]}</extra>`
      };
    });
    return { data, layout: {
      title: { text: `Pruning heads least needed first: ${escapeToken(survey.model)}, ${survey.sentences} sentences`, font: { size: 13 }, x: 0, xanchor: "left" },
      height: 360,
      margin: { l: 55, r: 10, t: 50, b: 50 },
      xaxis: { title: { text: "heads pruned (%)" }, range: [-2, 102], dtick: 10 },
      yaxis: { title: { text: name }, rangemode: "tozero" },
      plot_bgcolor: "white",
      legend: { orientation: "h", y: -0.22 },
      hovermode: "closest"
    } };
  }
  function start(state) {
    draw(document.getElementById("pruning"), pruningFigure(state.survey));
    const heads = document.getElementById("heads");
    draw(heads, summaryFigure(state.grid, heads.clientWidth || void 0));
  }
  return __toCommonJS(report_exports);
})();
