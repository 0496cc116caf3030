() => {
  // A click on a tile of an attention overview focuses that head: the tile's layer and head are read off the
  // figure's tick labels, and written into a hidden textbox whose change event sets the Focus head control.
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
        const box = document.querySelector('#tile-pick textarea, #tile-pick input');
        if (!box) return;
        box.value = `Layer ${layer} · Head ${head}#${Date.now()}`;  // a new value every click, so it always counts
        box.dispatchEvent(new Event('input', {bubbles: true}));
      });
    }
  };
  new MutationObserver(attach).observe(document.body, {childList: true, subtree: true});
  attach();
}
