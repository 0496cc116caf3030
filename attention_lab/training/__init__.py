"""Attention across training (the Training tab and /training): a model's training snapshots, each decoding the
user's source.

    decodings    Snapshots: each snapshot loaded once and shared; every snapshot decoding a source, kept
    feature      the Training tab: the film of every snapshot's decoding (film.mjs draws and plays it)
    api          /training
"""
