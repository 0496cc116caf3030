// The offline HTML export's own code: the decoding and the look come inlined (lab/attention/export.py); this draws
// them with views.js, as the page does, and lets the step, head, unit, specials, scale and reading be changed.
(() => {
  "use strict";
  const V = AttentionViews;
  const state = JSON.parse(document.getElementById("decoding").textContent);
  V.configure(state.config);
  const decoding = new V.Decoding(state.decoding);
  const controls = document.getElementById("controls");
  const field = (label, input) => {
    const wrap = document.createElement("label");
    wrap.append(label, " ", input);
    controls.append(wrap, " ");
    return input;
  };
  const select = (options, value) => {
    const s = document.createElement("select");
    for (const [key, text] of options) {
      const o = document.createElement("option");
      o.value = key;
      o.textContent = text;
      s.appendChild(o);
    }
    s.value = value;
    return s;
  };
  const checkbox = (checked) => Object.assign(document.createElement("input"), {type: "checkbox", checked});
  const steps = decoding.steps.length;
  const step = field("Show step", Object.assign(document.createElement("input"),
    {type: "range", min: 0, max: steps, value: state.shown, id: "shown"}));
  const focus = field("Focus head", select([["", "Mean of all heads"], ...state.focuses.map(f => [f, f])],
    state.focuses.includes(state.look.focus) ? state.look.focus : ""));
  const words = field("Merge pieces into words", checkbox(state.look.words));
  const hide = field("Hide special tokens", checkbox(state.look.hideSpecials));
  const scale = field("Colour scale", select(Object.entries(state.scales), state.look.scale));
  const reading = field("Reading", select(Object.entries(state.config.readings), state.look.reading));
  const draw = () => {
    const found = /^Layer (\d+) · Head (\d+)$/.exec(focus.value);
    const look = {words: words.checked, hideSpecials: hide.checked, scale: scale.value, reading: reading.value,
      focus: found ? [+found[1] - 1, +found[2] - 1] : null};
    const shown = Number(step.value);
    V.renderNow(document.querySelector("#now .lab-now"), V.now(decoding, shown, look));
    V.renderCandidates(document.querySelector("#candidates .lab-candidates"), decoding, shown);
    for (const kind of Object.keys(V.KINDS)) {
      const fig = V.view(decoding, kind, shown, look);
      window.Plotly.react(document.getElementById(`${kind}-view`), fig.data, fig.layout, {displaylogo: false});
    }
  };
  for (const input of [step, focus, words, hide, scale, reading]) input.addEventListener("input", draw);
  draw();
})();
