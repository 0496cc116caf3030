"""Put a benchmark's table into benchmarks/RESULTS.md between its own markers, leaving the other tables as they are."""

from __future__ import annotations

import re
from pathlib import Path

RESULTS = Path(__file__).resolve().parent / "RESULTS.md"


def put_block(name: str, table: str, path: Path = RESULTS) -> None:
    """Replace the block marked <!-- name --> ... <!-- /name --> with `table`, or add it at the end."""
    text = path.read_text(encoding="utf-8") if path.is_file() else ""
    block = f"<!-- {name} -->\n{table}\n<!-- /{name} -->"
    pattern = rf"<!-- {re.escape(name)} -->.*<!-- /{re.escape(name)} -->"
    if re.search(pattern, text, flags=re.DOTALL):
        text = re.sub(pattern, lambda _: block, text, flags=re.DOTALL)
    else:
        text = text.rstrip("\n") + "\n\n" + block + "\n"
    path.write_text(text, encoding="utf-8")


def with_blocks(report: str, path: Path = RESULTS) -> str:
    """`report` followed by the marked blocks the file at `path` has now, so that rewriting it keeps the other tables."""
    text = path.read_text(encoding="utf-8") if path.is_file() else ""
    blocks = [m.group(0) for m in re.finditer(r"<!-- ([\w-]+) -->.*?<!-- /\1 -->", text, flags=re.DOTALL)]
    return "\n\n".join([report.rstrip("\n"), *blocks]) + "\n"
