"""Two models on one sentence: each model's cross-attention in words (its pieces merged, as the views merge them),
and how far apart the two are at each output word they share. Any two models the app serves, or a training snapshot
(MODEL@SNAPSHOT).

    words     one decoding's cross-attention between its output's words and its source's
    align     the output words two outputs share (difflib), and the Jensen–Shannon distance between two rows
    record    the answer's records
    api       /compare_models
    feature   the Two models tab (a note for now: the page view comes later)
"""
