() => {
  // The page's own browser code, run once as the page loads (app.py passes it to gradio's launch).
  //
  // Clicks that pick something in a figure or in the now-view. Each writes into a hidden textbox, whose change event
  // runs on the server; a new value every click (the time is appended), so clicking the same thing twice counts.
  //  - a tile of an attention overview: its layer and head, read off the figure's tick labels -> #tile-pick;
  //  - a cell of the head summary: its "kind|Layer l · Head h" customdata -> #tile-pick (focus, and open the view);
  //  - a source word of the now-view: its pieces' positions -> #word-pick (the attention edit).
  const send = (id, value) => {
    const box = document.querySelector(`#${id} textarea, #${id} input`);
    if (!box) return;
    box.value = `${value}#${Date.now()}`;
    box.dispatchEvent(new Event('input', {bubbles: true}));
  };
  const nearest = (ticks, value) => ticks.reduce((best, t, i) => Math.abs(t - value) < Math.abs(ticks[best] - value) ? i : best, 0);
  const attach = () => {
    for (const gd of document.querySelectorAll('.attention-view .js-plotly-plot')) {
      if (gd.__tileClick || !gd.on) continue;
      gd.__tileClick = true;
      gd.on('plotly_click', (event) => {
        const point = event.points && event.points[0];
        if (!point || point.curveNumber !== 0) return;
        const layout = gd.layout;
        const layer = nearest(layout.yaxis.tickvals, point.y) + 1;
        const head = nearest(layout.xaxis.tickvals, point.x) + 1;
        send('tile-pick', `Layer ${layer} · Head ${head}`);
      });
    }
    for (const gd of document.querySelectorAll('.heads-view .js-plotly-plot')) {
      if (gd.__tileClick || !gd.on) continue;
      gd.__tileClick = true;
      gd.on('plotly_click', (event) => {
        const point = event.points && event.points[0];
        if (point && point.customdata) send('tile-pick', point.customdata);
      });
    }
  };
  document.addEventListener('click', (event) => {
    const word = event.target.closest && event.target.closest('.now-view .word[data-pieces]');
    if (word) send('word-pick', word.dataset.pieces);
  });
  // The Training chart is drawn once per film; the slider's label ("Snapshot 5 of 10: step 123"), which the server
  // updates with every move, says which snapshot to mark: moving the mark here spares redrawing the chart.
  const mark = () => {
    const label = document.querySelector('#snapshot [data-testid="block-info"], #snapshot label');
    const chart = document.querySelector('#snapshot-chart .js-plotly-plot');
    const found = label && /Snapshot (\d+) of \d+: step ([\d,]+)/.exec(label.textContent);
    const shape = chart && chart.layout && chart.layout.shapes && chart.layout.shapes[0];
    if (!found || !shape || !window.Plotly) return;
    const at = Number(found[1]) - 1;
    if (shape.x0 === at - 0.4) return;
    const title = String(chart.layout.title.text).replace(/step [\d,]+ shown/, `step ${found[2]} shown`);
    window.Plotly.relayout(chart, {'shapes[0].x0': at - 0.4, 'shapes[0].x1': at + 0.4, 'title.text': title});
  };
  new MutationObserver(attach).observe(document.body, {childList: true, subtree: true});
  new MutationObserver(mark).observe(document.body, {childList: true, subtree: true, characterData: true});
  attach();
  // The Export buttons "Focused head as PNG / SVG": the open tab's focused head (its figure's second trace), alone,
  // saved with the plotly.js already on the page.
  window.attentionLab = {
    download: (format) => {
      const gd = [...document.querySelectorAll('.attention-view .js-plotly-plot')].find(p => p.offsetParent !== null);
      if (!gd || !window.Plotly || gd.data.length < 2) return;
      const head = {...gd.data[1], xaxis: 'x', yaxis: 'y'};
      const lay = gd.layout;
      const layout = {title: {text: lay.yaxis2.title.text}, coloraxis: lay.coloraxis, plot_bgcolor: 'white',
        xaxis: {...lay.xaxis2, anchor: 'y'}, yaxis: {...lay.yaxis2, domain: [0, 1], anchor: 'x'},
        margin: {...lay.margin, t: 160}, width: 900, height: 220 + 22 * head.y.length};
      window.Plotly.downloadImage({data: [head], layout: layout}, {format: format, filename: 'attention-head'});
    },
  };
}
