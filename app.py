"""Attention Lab: step through a Transformer's decoding and see every head's attention.

    python app.py                                   # the bundled checkpoints, offline, on 127.0.0.1:7860
    python app.py --model user/repo [--model ...]   # models from the Hugging Face Hub (or folders) as well
    attention-lab --help                            # the same, once the package is installed (pip install .)

This is the entry that a Hugging Face Space and `python app.py` run; the app is the package attention_lab.
"""

import sys

from attention_lab.cli import main

if __name__ == "__main__":
    sys.exit(main())
