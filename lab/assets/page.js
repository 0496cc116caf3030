() => {
  // The page's own browser code, run once as the page loads; app.py puts views.js (AttentionViews) before it.
  //
  // The server sends the decoding as messages (lab/decoding/messages.py) into a hidden JSON component; this code
  // holds the decoding and draws, with plotly.js, the step's views (what the model looked at, the next-token
  // candidates) and the open attention tab. Show step, Focus head, Merge pieces into words, Hide special tokens,
  // Colour scale, Reading and a click on a tile are drawn here, with no request to the server (app.py wires them as
  // browser-only events). The Training tab's film is drawn the same way as its slider moves.
  //
  // Clicks that ask the server for something write into a hidden textbox, whose change event runs on the server; a
  // new value every click (the time is appended), so clicking the same thing twice counts:
  //  - a next-token candidate (what if?) -> #cand-pick;
  //  - a source word of the now-view: its pieces' positions (the attention edit) -> #word-pick;
  //  - a cell of the head summary: its "kind|Layer l · Head h" (focus, and open that view) -> #cell-pick.
  // A tile of an attention overview writes its "Layer l · Head h" into #tile-pick, whose change the page alone
  // takes: it sets the Focus head.
  const V = window.AttentionViews = AttentionViews;
  const send = (id, value) => {
    const box = document.querySelector(`#${id} textarea, #${id} input`);
    if (!box) return;
    box.value = `${value}#${Date.now()}`;
    box.dispatchEvent(new Event("input", {bubbles: true}));
  };
  const nearest = (ticks, value) => ticks.reduce((best, t, i) => Math.abs(t - value) < Math.abs(ticks[best] - value) ? i : best, 0);
  const focusOf = (label) => {
    const found = /^Layer (\d+) · Head (\d+)$/.exec(String(label || ""));
    return found && +found[1] > 0 && +found[2] > 0 ? [+found[1] - 1, +found[2] - 1] : null;
  };
  const box = (selector) => document.querySelector(selector);

  const lab = window.attentionLab = {
    decoding: null,
    key: "",
    fullKey: "", // the key of the last whole decoding received: what followed it was only steps more or fewer
    shown: 0,
    tab: "cross",
    look: {words: true, hideSpecials: false, scale: "linear", focus: null, reading: "weights"},
    film: null,
    snapshot: 0,
    why: null, // the Why tab's attribution and lens of the decoding (lab.why.tab), and whether a newer one is coming
    whyComputing: "",
    draws: 0, // how many times the views were drawn (the tests read it)

    /** A message from the server: the whole decoding, a step more, a step fewer, or another step shown. */
    receive(message) {
      if (!message || !message.op) return;
      const d = this.decoding;
      if (message.op === "full") this.decoding = new V.Decoding(message.data);
      else if (message.op === "clear") this.decoding = null;
      if (message.op === "full" || message.op === "clear") this.fullKey = message.key;
      else if (message.op === "step" && d && this.key === message.after) d.addStep(message);
      else if (message.op === "back" && d && this.key === message.after) d.keep(message.steps);
      else if (message.op !== "show" || this.key !== message.key) return; // not for what the page holds
      this.key = message.key;
      this.shown = message.shown;
      this.draw();
    },

    show(step) {
      const n = this.decoding ? this.decoding.steps.length : 0;
      const wanted = Math.max(0, Math.min(Number(step) || 0, n));
      if (wanted === this.shown) return;
      this.shown = wanted;
      this.draw();
    },

    setLook(words, hideSpecials, scale, focus, reading) {
      this.look = {words: !!words, hideSpecials: !!hideSpecials, scale: scale || "linear", focus: focusOf(focus),
        reading: reading || "weights"};
      this.draw();
      if (this.film) this.drawSnapshot();
    },

    open(tab) {
      this.tab = tab;
      requestAnimationFrame(() => this.draw()); // once the tab is shown: a hidden figure has no width
    },

    /** A tile's "Layer l · Head h#time" as the Focus head's new value (the current one if it is not a head). */
    tile(pick, current) {
      const label = String(pick || "").split("#")[0];
      return focusOf(label) ? label : current;
    },

    figure(container, fig) {
      if (!container) return;
      let gd = container.querySelector(".lab-figure");
      if (!gd) {
        gd = document.createElement("div");
        gd.className = "lab-figure";
        container.appendChild(gd);
      }
      window.Plotly.react(gd, fig.data, {...fig.layout, autosize: true}, {responsive: true, displaylogo: false});
      attach(gd);
    },

    draw() {
      if (!window.Plotly) return setTimeout(() => this.draw(), 50); // gradio's plotly.js has not loaded yet
      const d = this.decoding, look = this.look, shown = this.shown;
      const now = box("#now .lab-now"), candidates = box("#candidates .lab-candidates");
      if (now) d ? V.renderNow(now, V.now(d, shown, look)) : now.replaceChildren();
      if (candidates) d ? V.renderCandidates(candidates, d, shown) : candidates.replaceChildren();
      const container = box(`#${this.tab}-view`);
      if (container && container.offsetParent !== null && V.KINDS[this.tab]) {
        this.figure(container, d ? V.view(d, this.tab, shown, look) : V.emptyFigure("Run or Step to decode."));
      } else if (container && container.offsetParent !== null && this.tab === "compare") {
        this.figure(container, (d && V.compare(d, look)) || V.emptyFigure("Nothing to compare yet: a what-if, an ablation or an edit makes a decoding to compare with."));
      } else if (this.tab === "training" && this.film) {
        this.drawSnapshot();
      } else if (this.tab === "why") {
        this.drawWhy();
      }
      this.draws++;
    },

    /** The Training tab's film: every snapshot's decoding of the source. Returns the shown one's [info, output]. */
    receiveFilm(message, index) {
      if (!message) return [null, null];
      if (message.op === "computing") {
        this.film = null;
        const view = box("#snapshot-view");
        if (view && window.Plotly) this.figure(view, V.emptyFigure(message.text));
        return [message.text, ""];
      }
      this.film = {snapshots: message.snapshots.map(s => ({...s, decoding: s.data ? new V.Decoding(s.data) : null})),
        message: message.message || ""};
      return this.snapshotAt(index);
    },

    snapshotAt(index) {
      if (!this.film) return [null, null];
      const n = this.film.snapshots.length;
      if (!n) {
        this.drawSnapshot();
        return [this.film.message, ""];
      }
      this.snapshot = Math.max(0, Math.min(Number(index) || 0, n - 1));
      this.drawSnapshot();
      const shown = this.film.snapshots[this.snapshot];
      return [shown.info, shown.output];
    },

    drawSnapshot() {
      const view = box("#snapshot-view");
      if (!view || !window.Plotly || !this.film) return;
      const shown = this.film.snapshots[this.snapshot];
      if (!shown) return this.figure(view, V.emptyFigure(this.film.message || "No snapshots."));
      const d = shown.decoding;
      this.figure(view, d ? V.view(d, "cross", d.steps.length, this.look) : V.emptyFigure(shown.error));
      mark(this.snapshot, shown.step);
    },

    /** The Why tab's message: the run's attribution and lens, or that they are being computed. */
    receiveWhy(message) {
      if (!message) {
        this.why = null;
        this.whyComputing = "";
      } else if (message.op === "computing") {
        this.whyComputing = message.text;
      } else {
        this.why = message;
        this.whyComputing = "";
      }
      if (this.tab === "why") this.drawWhy();
    },

    drawWhy() {
      const view = box("#why-view");
      if (!view || !window.Plotly || view.offsetParent === null) return;
      if (!view.querySelector(".why-text")) {
        view.querySelector(".lab-drawn").innerHTML = "<div class='why-busy'></div><div class='why-text'></div>"
          + "<div class='why-agree'><div class='why-cross'></div><div class='why-self'></div></div>"
          + "<div class='why-agree-note note'></div><div class='why-lens'></div>";
      }
      const parts = (name) => view.querySelector(`.${name}`);
      const d = this.decoding, why = this.why;
      // Another decoding's is not shown as this one's. This one's from before a Step or a Back is, for the steps
      // both have, while the new one is on its way: made at or after the last whole decoding the page received (a
      // what-if, an ablation or an edit sends a whole one), with the same tokens.
      const at = (key) => String(key).split(".");
      const [whySerial, whyVersion] = why ? at(why.key) : [], [serial] = at(this.key), [fullSerial, fullVersion] = at(this.fullKey);
      const usable = d && why && (why.key === this.key || (whySerial === serial && fullSerial === serial
        && +whyVersion >= +fullVersion && why.tokens.every((t, i) => i >= d.steps.length || d.steps[i].token === t)));
      parts("why-busy").textContent = this.whyComputing;
      const state = !d ? {empty: "Run or Step to decode."} : usable ? V.why(d, why, this.shown, this.look)
        : {empty: this.whyComputing || "Open this tab after a Run."};
      V.renderWhy(parts("why-text"), state);
      const figures = [parts("why-cross"), parts("why-self"), parts("why-lens")];
      if (usable && why.lens) this.figure(figures[2], V.lensFigure(d, why.lens, this.shown, figures[2].clientWidth));
      else figures[2].replaceChildren();
      if (state.empty) {
        figures.slice(0, 2).forEach(f => f.replaceChildren());
        parts("why-agree-note").textContent = "";
        return;
      }
      parts("why-agree-note").textContent = why.notes.agreement;
      this.figure(figures[0], V.agreementFigure(state.agreement.cross, "Cross heads vs the source's attribution", this.look.focus));
      this.figure(figures[1], V.agreementFigure(state.agreement.decoder_self, "Decoder self heads vs the prefix's", this.look.focus));
    },

    download(format) {
      // Export: the open tab's focused head (its figure's second trace), alone, with the plotly.js on the page.
      const gd = [...document.querySelectorAll(".attention-view .js-plotly-plot")].find(p => p.offsetParent !== null);
      if (!gd || !window.Plotly || gd.data.length < 2) return;
      const head = {...gd.data[1], xaxis: "x", yaxis: "y"};
      const lay = gd.layout;
      const layout = {title: {text: lay.yaxis2.title.text}, coloraxis: lay.coloraxis, plot_bgcolor: "white",
        xaxis: {...lay.xaxis2, anchor: "y"}, yaxis: {...lay.yaxis2, domain: [0, 1], anchor: "x"},
        margin: {...lay.margin, t: 160}, width: 900, height: 220 + 22 * head.y.length};
      window.Plotly.downloadImage({data: [head], layout}, {format, filename: "attention-head"});
    },
  };

  // The Training chart is drawn once per source by the server; the shown snapshot's mark moves here.
  const mark = (index, step) => {
    const chart = box("#snapshot-chart .js-plotly-plot");
    const shape = chart && chart.layout && chart.layout.shapes && chart.layout.shapes[0];
    if (!shape || shape.x0 === index - 0.4) return;
    const title = String(chart.layout.title.text).replace(/step [\d,]+ shown/, `step ${step.toLocaleString("en-US")} shown`);
    window.Plotly.relayout(chart, {"shapes[0].x0": index - 0.4, "shapes[0].x1": index + 0.4, "title.text": title});
  };

  // A tile of an overview: the layer and head nearest the click, read off the overview's axes (its trace has no
  // hover, so plotly reports no point), become the Focus head.
  const attach = (gd) => {
    if (gd.__tileClick) return;
    gd.__tileClick = true;
    gd.addEventListener("click", (event) => {
      const full = gd._fullLayout, ticks = gd.layout && gd.layout.yaxis && gd.layout.yaxis.tickvals;
      if (!full || !ticks) return;
      const box = gd.getBoundingClientRect(), xa = full.xaxis, ya = full.yaxis;
      const px = event.clientX - box.left - xa._offset, py = event.clientY - box.top - ya._offset;
      if (px < 0 || px > xa._length || py < 0 || py > ya._length) return; // not on the overview
      const layer = nearest(ticks, ya.p2l(py)) + 1, head = nearest(gd.layout.xaxis.tickvals, xa.p2l(px)) + 1;
      send("tile-pick", `Layer ${layer} · Head ${head}`);
    });
  };
  // A cell of the head summary (a server-drawn figure): focus that head and open its view.
  const attachSummary = () => {
    for (const gd of document.querySelectorAll(".heads-view .js-plotly-plot")) {
      if (gd.__cellClick || !gd.on) continue;
      gd.__cellClick = true;
      gd.on("plotly_click", (event) => {
        const point = event.points && event.points[0];
        if (point && point.customdata) send("cell-pick", point.customdata);
      });
    }
  };
  document.addEventListener("click", (event) => {
    const target = event.target.closest ? event.target : event.target.parentElement;
    const word = target && target.closest(".now-view .word[data-pieces]");
    if (word) return send("word-pick", word.dataset.pieces);
    const candidate = target && target.closest(".candidates .candidate[data-token]");
    if (candidate && !candidate.classList.contains("taken")) send("cand-pick", candidate.dataset.token);
  });
  // Server-drawn figures arrive after the page drew its own: the summary's cells become clickable, and the training
  // chart (filled after the film) gets the shown snapshot's mark.
  new MutationObserver(() => {
    attachSummary();
    const film = lab.film && lab.film.snapshots[lab.snapshot];
    if (film) mark(lab.snapshot, film.step);
  }).observe(document.body, {childList: true, subtree: true});
  attachSummary();
}
