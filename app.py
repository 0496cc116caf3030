"""Attention Lab app (placeholder until the visualizer lands): loads nothing yet, says so, and exits."""

import sys


def main() -> int:
    print("The Attention Lab visualizer is not built yet; the transformer package and its tests are.", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
