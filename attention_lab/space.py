"""python -m attention_lab.space USER/SPACE [--private] [--token T] [--dry-run]: put the app on a Hugging Face Space (the code is
attention_lab.serving.space)."""

import sys

from .serving.space import main

if __name__ == "__main__":
    sys.exit(main())
