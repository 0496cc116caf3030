"""How the bundled checkpoints were made: corpora, training, evaluation and model cards.

    python -m training.data ding                                   # extract the Ding corpus into data/de-en
    python -m training.train --task reverse                        # train a preset
    python -m training.evaluate --model checkpoints/de-en --split test
    python -m training.card --model checkpoints/de-en --minutes 476 --hardware "2-core CPU"

It builds on the `transformer` library and nothing imports it back: the library and the app never need it.
"""
