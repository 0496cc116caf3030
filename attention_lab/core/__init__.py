"""The app's shared vocabulary: what every feature and the page speak of a decoding, apart from any one tab.

kinds        the three kinds of attention as the page names them
naming       heads by name ("kind:layer:head", 1-based) and the library's Head; labels and choices
units        words or pieces, specials hidden or not: which pieces form a word, and every label
payload      a decoding's attention as the page receives it: once per Run, then a step at a time
looks        the readings, colour scales and Focus head choices the page offers, and the names it shows
summaries    every head summarised over a decoding (entropy, special tokens, gold alignment)
grids        those summaries as the page draws them (grids.mjs: the Heads tab and the survey)
attention_export  the JSON record of a decoding (the export, and the /attention API)
text         the page's notes on words and readings
"""
