"""Attention across training (the Training tab and /training): a model's training snapshots, each decoding the
user's source.

    decodings    Snapshots: each snapshot loaded once and shared; every snapshot decoding a source
    chart        validation loss and scores against training step
    tab          what the tab shows, and the API's record
"""
