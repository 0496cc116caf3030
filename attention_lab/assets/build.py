"""`python -m attention_lab.assets.build`: remakes assets/bundled/ (assets.bundles) from the page modules with esbuild,
the npm package that package.json pins (run `npm ci` first). Only a developer runs it, when a page module changes: the
app and its exports read the bundles it made.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path

from .bundles import BUNDLED, ENTRIES, MODULES, NAME, PACKAGE, bundle_file

REPO = PACKAGE.parent
ESBUILD = REPO / "node_modules" / ".bin" / "esbuild"  # as `npm ci` installs it


def build(entry: Path, out: Path, esbuild: Path = ESBUILD) -> list[Path]:
    """Bundle `entry` and every module it imports into the classic script `out` (esbuild: as an IIFE that sets
    NAME); the modules it took in. Run from the repository, so that the comments name the modules' paths alike
    on every machine."""
    if not Path(esbuild).is_file():
        raise FileNotFoundError(f"esbuild is not installed ({esbuild}): run npm ci")
    with tempfile.TemporaryDirectory() as work:
        meta = Path(work) / "meta.json"
        subprocess.run(
            [
                str(esbuild),
                str(entry.resolve()),
                "--bundle",
                "--minify-whitespace",
                "--minify-syntax",  # names kept, for reading and for tests; a build output, as the vendored runtime is (page_copy/vendor/*.min.mjs): the modules are the source
                "--format=iife",
                f"--global-name={NAME}",
                "--target=es2022",
                "--charset=utf8",
                "--log-level=warning",
                f"--metafile={meta}",
                f"--outfile={out}",
            ],
            cwd=REPO,
            check=True,
            capture_output=True,
            text=True,
        )
        inputs = json.loads(meta.read_text(encoding="utf-8"))["inputs"]
    return sorted((REPO / path).resolve() for path in inputs)


def build_all(folder: Path = BUNDLED) -> None:
    """Every entry's bundle and modules.json, in `folder`."""
    folder.mkdir(parents=True, exist_ok=True)
    listed = {}
    for entry in ENTRIES:
        taken = build(entry, folder / bundle_file(entry).name)
        listed[entry.relative_to(PACKAGE).as_posix()] = [path.relative_to(PACKAGE).as_posix() for path in taken]
    (folder / MODULES.name).write_text(json.dumps(listed, indent=1) + "\n", encoding="utf-8")


def main() -> int:
    try:
        build_all()
    except (FileNotFoundError, subprocess.CalledProcessError) as err:
        print(f"bundles: {getattr(err, 'stderr', None) or err}".strip(), file=sys.stderr)
        return 2
    print(f"{BUNDLED}: {', '.join(bundle_file(entry).name for entry in ENTRIES)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
