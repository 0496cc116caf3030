"""The exports and the `attention-lab export` command: what leaves the app to work without it.

lesson       a decoding's views in one HTML file that works offline (lesson.mjs, lesson.css): the Attention tab's
             Export, `attention-lab export MODEL SOURCE`, and the notebook's view
live         a model decoding in the page with no server: one HTML file, or a folder that is a static Space
             (`attention-lab export --live`; live.mjs, live.css)
__main__     the command: `attention-lab export MODEL SOURCE -o lesson.html`, `attention-lab export --live MODEL -o ...`
"""
