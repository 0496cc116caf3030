"""What the model looked at: the views of a decoding's attention, every kind, layer and head.

kinds      the three kinds of attention as the page names them
units      words or pieces, specials hidden or not (one merge, used by every view)
drawing    Look (how the user asked to see the weights) and Drawing (a decoding's views at any step)
figures    plotly figures: every head tiled, the focused head large, the now-view, side by side
record     the JSON record of a decoding (the export, and the /attention API)
export     the JSON file and the offline HTML page
text       the page's notes on words and readings
"""
