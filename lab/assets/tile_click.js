() => {
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
  new MutationObserver(attach).observe(document.body, {childList: true, subtree: true});
  attach();
}
