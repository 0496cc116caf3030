"""The Training tab's film made in the page (training/in_page.mjs: the page copy's snapshots, page_copy/snapshots.py,
each decoding the source with ONNX Runtime) equals the server's (training/feature.py `film`: the library decoding
with each snapshot loaded from its checkpoint): for the reversal model's ten snapshots, three sources and one under a
length limit, every frame's step, line, output, measures and alignment, and its whole decoding (tokens, labels,
candidates; weights within two steps of their 16-bit rounding, probabilities within 1e-5, as test_live.py holds the
step loop's)."""

from __future__ import annotations

import json
import math

import pytest

from attention_lab.messages import jsonable
from attention_lab.training.decodings import Snapshots
from attention_lab.training.feature import film
from tests.node import PACKAGE, needs_node, run_modules
from tests.test_explain_in_page import in_page
from tests.test_live import same_message

pytestmark = [pytest.mark.slow, needs_node]
SOURCES = [("abcdefghij", None), ("helloworld", None), ("attentionisallyouneed", None), ("reversal", 6)]


def test_the_pages_film_is_the_servers(bundled, bundled_copies, tmp_path):
    pipeline = bundled.entries["reverse"].pipeline
    cases = [
        {"ids": pipeline.tokenizer.encode(text), "tokens": [], "more": {"limit": limit}} for text, limit in SOURCES
    ]
    answers = in_page(bundled_copies["reverse"], cases, tmp_path, {"training": {}})
    snapshots = Snapshots(bundled)
    for (text, limit), answer in zip(SOURCES, answers, strict=True):
        ours, theirs = answer["training"], jsonable(film(snapshots, "reverse", text, limit))
        assert len(ours["snapshots"]) == len(theirs["snapshots"]) == 10, text
        for mine, wanted in zip(ours.pop("snapshots"), theirs.pop("snapshots"), strict=True):
            where = f"{text!r} at step {wanted['step']}"
            same_message(mine.pop("data"), wanted.pop("data"))
            assert math.isclose(mine.pop("alignment"), wanted.pop("alignment"), abs_tol=1e-4), where
            assert mine == wanted, where  # its step, line, output, error, loss and scores
        assert ours == theirs, text  # the model's name, the chart's factors
    # the known answer: the trained model reads each character from its mirror position, the untrained one does not
    first, *_, final = film(snapshots, "reverse", "abcdefghij", None).snapshots
    assert final.output == "jihgfedcba" and final.alignment >= 0.9 > first.alignment


def test_a_model_with_no_snapshots_is_told_in_the_page_in_the_servers_words(bundled, bundled_copies, tmp_path):
    """de-en ships no training snapshots: its copy carries why, in the server's words, and the page says it with no
    request (the server's film for it: no frame, that message)."""
    from attention_lab.checks import InputError
    from attention_lab.training.feature import Film

    with pytest.raises(InputError) as none:
        Snapshots(bundled).listed("de-en")
    ids = bundled.entries["de-en"].pipeline.tokenizer.encode("Das Haus ist alt.")
    (answer,) = in_page(bundled_copies["de-en"], [{"ids": ids, "tokens": []}], tmp_path, {"training": {}})
    assert answer["training"] == jsonable(Film([], message=str(none.value)))
    assert "no training snapshots" in answer["training"]["message"]


def test_sessions_made_at_once_each_read_their_own_weights(bundled, bundled_copies):
    """Every graph reads its weights as "weights.bin", and the runtime keeps the files of the session being made in
    one map: the page makes its sessions one at a time (page_copy/session.mjs), or two copies loading at once (the
    model and its first snapshot here, two models in the page's menu) decode with each other's weights. Each copy
    loaded at once with the other decodes as the library does with its own."""
    copy = bundled_copies["reverse"]
    first = Snapshots(bundled).listed("reverse")[0]
    folder = next(s["folder"] for s in json.loads((copy / "config.json").read_text())["snapshots"] if s["folder"])
    body = """
      const read = (name) => new Uint8Array(readFileSync(data.copy + "/" + name));
      const ort = await import(data.vendor + "/ort.wasm.bundle.min.mjs");
      const {Tokenizer} = await import(data.vendor + "/tokenizers.min.mjs");
      ort.env.wasm.numThreads = 1;
      ort.env.wasm.wasmBinary = (await import("node:zlib")).gunzipSync(readFileSync(data.vendor + "/ort-wasm-simd-threaded.wasm.gz"));
      const parts = (at) => ({encoder: read(at + "encoder.onnx"), decoder: read(at + "decoder.onnx"),
        weights: read(at + "weights.bin"), tokenizer: JSON.parse(readFileSync(data.copy + "/tokenizer.json", "utf8")),
        config: JSON.parse(readFileSync(data.copy + "/config.json", "utf8"))});
      const models = await Promise.all(["", data.folder].map((at) => model.LiveModel.load(ort, Tokenizer, parts(at))));
      const outputs = [];
      for (const m of models) {
        const session = await m.start(data.ids, 5, data.most);
        while (!session.finished) await session.step();
        outputs.push(session.tokens);
      }
      return outputs;
    """
    pipeline = bundled.entries["reverse"].pipeline
    ids = pipeline.tokenizer.encode("abcdefghij")
    untrained = film(Snapshots(bundled), "reverse", "abcdefghij", None).snapshots[0].output  # the library's
    vendor = str(PACKAGE / "page_copy" / "vendor")
    data = {"copy": str(copy), "folder": folder, "ids": ids, "most": len(untrained), "vendor": vendor}
    ours, snapshot = run_modules({"model": "page_copy/model.mjs"}, body, data)
    text = pipeline.tokenizer.decode
    assert text(ours) == "jihgfedcba"
    assert first.folder.name in folder
    assert text(snapshot) == untrained != "jihgfedcba"
