"""Exit 0 when every pinned requirement in the files given is installed at a version its pin allows, 1 otherwise.

    python3 tests/pins.py requirements.txt tests/requirements.txt

tests/run.sh runs pip only when this says something is missing; any doubt (a file, a package or `packaging` itself
missing) counts as missing.
"""

import sys
from importlib.metadata import PackageNotFoundError, version


def satisfied(paths: list[str]) -> bool:
    try:
        from packaging.requirements import Requirement

        for path in paths:
            with open(path, encoding="utf-8") as lines:
                for line in lines:
                    text = line.split("#", 1)[0].strip()
                    if text and not Requirement(text).specifier.contains(version(Requirement(text).name), True):
                        return False
    except (ImportError, OSError, PackageNotFoundError, ValueError):
        return False
    return True


if __name__ == "__main__":
    sys.exit(0 if satisfied(sys.argv[1:]) else 1)
