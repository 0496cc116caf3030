"""Put the app on a Hugging Face Space: create it (sdk gradio) and upload what it runs, and nothing else.

    python -m attention_lab.space your-name/attention-lab              # a token from `hf auth login` or HF_TOKEN
    python -m attention_lab.space your-name/attention-lab --dry-run    # only list what would be uploaded

A git push of this repository is refused by the Hub (checkpoints/de-en/model.safetensors is over 10 MB outside LFS,
in the history too); upload_folder stores large files in LFS by itself. The Space reads this README's front matter
(sdk, sdk_version, app_file) and installs requirements.txt.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from huggingface_hub import HfApi
from huggingface_hub.utils import filter_repo_objects

from transformer import checkpoint, snapshots

REPO = Path(__file__).resolve().parents[2]
# What the Space runs: its entry (app.py), the app (attention_lab, its page modules among it), the library, the bundled
# models, its configuration (README.md's front matter, requirements.txt), and the README's images.
SPACE_FILES = [
    "app.py",
    "requirements.txt",
    "README.md",
    "attention_lab/*",
    "transformer/*",
    "docs/*",
    # each bundled model's checkpoint files and snapshots, so that nothing else (a pickle) ever leaves
    *(f"checkpoints/*/{name}" for name in (*checkpoint.CHECKPOINT_FILES, *snapshots.PATTERNS)),
]
LEFT_OUT = ["*/__pycache__/*", "*.pyc"]


def space_files(folder: Path = REPO) -> list[str]:
    """The files upload_folder sends from `folder`, as paths relative to it, sorted."""
    found = [str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file()]
    return sorted(filter_repo_objects(found, allow_patterns=SPACE_FILES, ignore_patterns=LEFT_OUT))


def deploy(space_id: str, folder: Path = REPO, token: str | None = None, private: bool = False) -> str:
    """Create the Space if it does not exist, and upload the app's files in one commit; returns the commit URL."""
    api = HfApi(token=token)
    api.create_repo(space_id, repo_type="space", space_sdk="gradio", private=private, exist_ok=True)
    return api.upload_folder(
        repo_id=space_id,
        repo_type="space",
        folder_path=str(folder),
        allow_patterns=SPACE_FILES,
        ignore_patterns=LEFT_OUT,
        commit_message="Attention Lab: the app, the library and the bundled models",
    )


def main(argv: list[str] | None = None, prog: str = "python -m attention_lab.space") -> int:
    parser = argparse.ArgumentParser(prog=prog, description=__doc__.split("\n")[0])
    parser.add_argument("space_id", metavar="USER/SPACE", help="the Space to create or update")
    parser.add_argument("--private", action="store_true", help="create the Space private")
    parser.add_argument("--token", help="a Hub token with write access (default: the logged-in one, or HF_TOKEN)")
    parser.add_argument("--dry-run", action="store_true", help="list the files and their total size, upload nothing")
    args = parser.parse_args(argv)
    files = space_files()
    size = sum((REPO / f).stat().st_size for f in files) / 1e6
    if args.dry_run:
        print("\n".join(files))
        print(f"{len(files)} files, {size:.1f} MB, to the Space {args.space_id}")
        return 0
    try:
        url = deploy(args.space_id, token=args.token, private=args.private)
    except Exception as err:  # noqa: BLE001 - no token, no network, a name taken: one line, not a traceback
        print(f"could not upload to the Space {args.space_id}: {type(err).__name__}: {err}", file=sys.stderr)
        return 1
    print(f"uploaded {len(files)} files ({size:.1f} MB): {url}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
