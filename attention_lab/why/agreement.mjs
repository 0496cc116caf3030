// Each head's agreement with the attribution (rank.mjs agreement: Spearman's ρ per head), layers down and heads
// across, as cells the page draws itself: a few dozen cells, redrawn at every Step with no figure to lay out (as
// plotly heatmaps the two grids took 45 ms of a Step's 75 ms redraw). Blue where a head's attention ranks the units
// as the attribution does, red where it ranks them the other way (the words' shading, decoding.css); a click on a
// head focuses it.

import {el} from "../assets/dom.mjs";
import {shade} from "../assets/plot.mjs";

const VALUES_UP_TO = 8; // heads: with more, a cell shows its shade alone (its value on hover)

/** The grid `grid` (per layer, per head: ρ or null) titled `title` and named `name` (for a screen reader: not a
 * control's label, such as Source), the head `focus` ([layer, head]) outlined; `focused([layer, head])` is called when
 * a head is clicked. */
export function agreementGrid(grid, title, name, focus, focused) {
  const L = grid.length, H = L ? grid[0].length : 0;
  const box = el("div", "why-grid");
  const cells = el("div", "why-grid-cells");
  cells.style.setProperty("--heads", String(H));
  cells.setAttribute("role", "group"); // buttons in a labelled group (a "grid" role would need rows and gridcells)
  cells.setAttribute("aria-label", name);
  const heads = Array.from({length: H}, (_, h) => el("span", "why-grid-head", `h${h + 1}`));
  cells.append(el("span", "why-grid-corner"), ...heads);
  grid.forEach((row, l) => {
    cells.append(el("span", "why-grid-layer", `layer ${l + 1}`));
    row.forEach((v, h) => {
      const cell = el("button", "why-grid-cell shaded", v === null || H > VALUES_UP_TO ? "" : v.toFixed(2));
      const {strength, negative, deep} = shade(v ?? 0, true);
      cell.type = "button";
      cell.style.setProperty("--shade", strength);
      cell.classList.toggle("negative", negative);
      cell.classList.toggle("deep", deep);
      cell.classList.toggle("focused", !!focus && focus[0] === l && focus[1] === h);
      cell.dataset.layer = String(l);
      cell.dataset.head = String(h);
      cell.title = `layer ${l + 1}, head ${h + 1}: agreement ρ = ${v === null ? "none" : v.toFixed(2)}`;
      cell.addEventListener("click", () => focused([l, h]));
      cells.append(cell);
    });
  });
  const scale = el("div", "why-grid-scale");
  scale.append(el("span", "", "ρ −1"), el("span", "why-grid-bar"), el("span", "", "1"));
  box.append(el("div", "why-grid-title", title), cells, scale);
  return box;
}
