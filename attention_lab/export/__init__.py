"""Export: the whole view as one HTML file that works offline (the page's own modules bundled, with plotly.js and the
decoding inlined), and every head's weights as JSON.

    html         the offline page, built from export/offline.mjs and what it imports
    feature      the Attention tab's Export: its buttons and files
    offline.mjs  the offline page's start: the app's own views on the decoding it holds
"""
