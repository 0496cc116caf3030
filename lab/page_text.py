"""The page's words: tab titles, the notes beside the views, and the browser code of the image exports."""

from __future__ import annotations

TAB_TITLES = {
    "cross": "Cross-attention",
    "encoder": "Encoder self-attention",
    "decoder_self": "Decoder self-attention",
    "heads": "Heads",
    "training": "Training",
    "beams": "Beams",
    "compare": "Compare",
}
HEADS_NOTE = (
    "Every head of every kind, summarised over this decoding; click a cell to focus that head in its view. "
    "Attention weights alone do not say what a head does (Jain & Wallace 2019; Wiegreffe & Pinter 2019), so the last "
    "row *tests* each head: it is removed from the real forward pass and the next-token distribution compared. Below, "
    "ablate any set of heads and see, step by step, what changes."
)
TRAINING_NOTE = (
    "The same model at snapshots taken during its training, from the untrained start (step 0) to the model the other "
    "tabs show, decoding this source. Slide or play: the cross-attention below goes from a blur to the alignment it "
    "learned, while the chart shows the validation loss fall and, where the gold alignment is known (reversal), the "
    "best cross head's alignment on this source rise."
)
WORDS_NOTE = (
    "Tokens are merged into words: the attention *to* a word is the sum over its pieces, and the attention *from* "
    "a word is the mean over its pieces, so every row still sums to 1. Untick it to see the subword pieces "
    "(“##” marks a piece that continues a word)."
)


def download_js(image_format: str) -> str:
    """Browser code that saves the focused head of the open tab (the figure's second trace, alone) as an image, with
    the plotly.js already on the page."""
    return f"""() => {{
  const gd = [...document.querySelectorAll('.attention-view .js-plotly-plot')].find(p => p.offsetParent !== null);
  if (!gd || !window.Plotly || gd.data.length < 2) return;
  const head = {{...gd.data[1], xaxis: 'x', yaxis: 'y'}};
  const lay = gd.layout;
  const layout = {{title: {{text: lay.yaxis2.title.text}}, coloraxis: lay.coloraxis, plot_bgcolor: 'white',
    xaxis: {{...lay.xaxis2, anchor: 'y'}}, yaxis: {{...lay.yaxis2, domain: [0, 1], anchor: 'x'}},
    margin: {{...lay.margin, t: 160}}, width: 900, height: 220 + 22 * head.y.length}};
  window.Plotly.downloadImage({{data: [head], layout: layout}}, {{format: '{image_format}', filename: 'attention-head'}});
}}"""


READINGS_NOTE = (
    "**Attention weights** are the softmax weights α each head computed. "
    "**Value-weighted** scales each weight by the size of what that token's value adds through the head, "
    "‖α·v·W_o‖, then shows each row's shares (Kobayashi et al. 2020, "
    "[Attention is Not Only a Weight](https://aclanthology.org/2020.emnlp-main.574/)). "
    "**Rollout** multiplies self-attention through the layers, the residual counted as attention to itself, heads "
    "averaged; cross-attention is carried through the whole encoder rollout, so its columns are input tokens "
    "(Abnar & Zuidema 2020, [Quantifying Attention Flow in Transformers](https://aclanthology.org/2020.acl-main.385/))."
)
