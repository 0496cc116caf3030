"""The Attention tab: every kind, layer and head of a decoding's attention at the shown step, drawn in the page
(views.mjs its controls and figures, figures.mjs the figures themselves, tiles.mjs the small multiples) from the
decoding the page holds. What it draws from (the payload, units, names, looks) is the app's shared vocabulary in
attention_lab.core.

    feature    the tab: the views, and Export under them
    export     Export: the lesson file, the JSON export and the live page, as files to download
    api        /attention, the JSON export as an endpoint
"""
