"""Two models on one sentence, timed: /compare_models with the bundled de-en model against a tiny transformers Marian
(made here: random weights, 2+2 layers of 4 heads, d 16, a word-level vocabulary that covers the sentence:
benchmarks/shaped_models.py) on one 10-word German sentence, at the app's one thread per request, with its parts on
their own.

    python benchmarks/compare_models_speed.py [--write]    # --write: into benchmarks/RESULTS.md's "two_models" block
    python benchmarks/compare_models_speed.py --quick      # once each: that it runs

The endpoint is called as the app calls it (its function, through its Endpoint's Request); the times are the median,
min and max of REPEATS calls after one untimed call. Moving the shown step in the Two models tab, drawn in the page,
is timed in the browser table (benchmarks/browser_speed.py).
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

import attention_lab.adapters  # noqa: F401 - transformers encoder–decoders load through load_pretrained
from attention_lab.feature import Shared
from attention_lab.messages import jsonable
from attention_lab.models.registry import Registry, load_models
from attention_lab.request import Request
from attention_lab.two_models.api import COMPARE, decoded
from attention_lab.two_models.messages import two_models_record
from attention_lab.two_models.words import word_attention
from benchmarks.browser_speed import TEN_WORDS
from benchmarks.endpoint_timing import WARMED, median_table, timed
from benchmarks.endpoint_timing import main as run
from benchmarks.shaped_models import marian_shape, shaped_marian
from transformer import load_pretrained

SENTENCE = TEN_WORDS
TINY = marian_shape(16, 2, 4, 32)
REPEATS = 10
GOAL_S = 1.0  # /compare_models on a 10-word sentence at one thread


def registry(folder: Path) -> Registry:
    bundled = load_models([])
    marian = load_pretrained(str(shaped_marian(folder / "marian", TINY, 256, SENTENCE)))
    return Registry.of({"de-en": bundled.entry("de-en").pipeline, "marian": marian})


def measure(repeats: int) -> dict[str, list[float]]:
    with tempfile.TemporaryDirectory() as folder:
        shared = Shared(registry(Path(folder)))
        request = Request(COMPARE, shared)
        runs = {name: decoded(request, name, SENTENCE) for name in ("de-en", "marian")}
        found = {name: word_attention(run.session, run.pipeline) for name, run in runs.items()}
        ours, marian = found["de-en"], found["marian"]
        answer = COMPARE.fn(request, "de-en", "marian", SENTENCE)
        return {
            "compare": timed(lambda: COMPARE.fn(request, "de-en", "marian", SENTENCE), repeats),
            "decode_ours": timed(lambda: decoded(request, "de-en", SENTENCE), repeats),
            "decode_marian": timed(lambda: decoded(request, "marian", SENTENCE), repeats),
            "words": timed(lambda: [word_attention(r.session, r.pipeline) for r in runs.values()], repeats),
            "record": timed(lambda: jsonable(two_models_record("de-en", ours, "marian", marian)), repeats),
            "source": [len(answer.source_words)],
            "written": [len(side.output_tokens) for side in answer.models],
            "shared": [len(answer.shared)],
        }


ROWS = (
    ("compare", "/compare_models (the answer)"),
    ("decode_ours", "of which: de-en's greedy decoding"),
    ("decode_marian", "of which: the tiny Marian's greedy decoding"),
    ("words", "of which: both decodings' cross-attention in words"),
    ("record", "of which: lining the source words up, the shared words and their distances, as JSON"),
)


def table(times: dict[str, list[float]]) -> str:
    (ours, marian), calls = times["written"], len(times["compare"])
    title = (
        f"Two models (`python benchmarks/compare_models_speed.py --write`): de-en against a tiny Marian on "
        f"“{SENTENCE}” ({times['source'][0]} source words; {ours} and {marian} tokens written, "
        f"{times['shared'][0]} words shared), one thread, {calls} calls{WARMED[calls > 1]}."
    )
    return median_table(title, ROWS, times, ("compare", GOAL_S))


def main(argv: list[str] | None = None) -> int:
    return run(__doc__, "two_models", lambda repeats: table(measure(repeats)), argv, REPEATS)


if __name__ == "__main__":
    raise SystemExit(main())
