"""Two models on one sentence: each model's cross-attention in words (its pieces merged, as the views merge them),
and how far apart the two are at each output word they share. Any two models the app serves, or a training snapshot
(MODEL@SNAPSHOT).

    words     one decoding's cross-attention between its output's words and its source's
    align     the output words two outputs share (difflib), and the Jensen–Shannon distance between two rows
    record    the answer's records, and the tab's message
    api       /compare_models
    feature   the Two models tab: the page's decoding beside a second model's
    pair.mjs  how one side follows the other, and the summary line (no DOM: Node tests)
    two_models.mjs   the tab's view
"""
