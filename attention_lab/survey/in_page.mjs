// The Survey tab's grid in the page: the survey saved beside the model comes in its page copy (survey/feature.py
// PAGE_FILE, the grid the server sends), read as it is; a survey.json chosen in the page is the server's from then on.
// tests/test_survey_in_page.py holds it equal to the server's.

const FILE = "corpus.json";
let chosen = false; // a survey.json chosen in this page

const grids = new WeakMap(); // a page copy -> its survey's grid (a promise)

/** The grid of the survey the page copy `model` carries. */
export function made(model) {
  if (!grids.has(model)) grids.set(model, model.file(FILE).then((bytes) => JSON.parse(new TextDecoder().decode(bytes))));
  return grids.get(model);
}

/** Whether the page shows the survey of `model`: its copy carries one and none was chosen here. */
export function carried(model) {
  return !chosen && (!model || (model.config.files ?? []).includes(FILE));
}

/** A survey.json was chosen: the server reads it, and shows it from now on. */
export function choose() {
  chosen = true;
}
