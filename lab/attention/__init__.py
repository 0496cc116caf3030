"""What the model looked at: the views of a decoding's attention, every kind, layer and head. The page draws them
(assets/views.js) from what the server sends it here.

    kinds      the three kinds of attention as the page names them
    units      words or pieces, specials hidden or not: which pieces form a word, and every label
    payload    a decoding's attention as the page receives it: once per Run, then a step at a time
    looks      the readings, colour scales and Focus head choices the page offers
    figures    the views' colours and sizes (sent to the page), and the server's own plotly helpers
    record     the JSON record of a decoding (the export, and the /attention API)
    export     the JSON file, and the offline HTML page (the page's own drawing code, with the decoding)
    text       the page's notes on words and readings
"""
