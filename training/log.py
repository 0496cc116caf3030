"""The training run's log lines: beside the progress bar, on stderr (unbuffered, so a log file shows them at once)."""

import sys

from tqdm import tqdm


def report(message: str) -> None:
    tqdm.write(message, file=sys.stderr)
