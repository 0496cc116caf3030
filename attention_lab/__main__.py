"""python -m attention_lab: the same as the attention-lab command (attention_lab.cli)."""

import sys

from .cli import main

if __name__ == "__main__":
    sys.exit(main())
