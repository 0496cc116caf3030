from __future__ import annotations

import contextlib
import gc
import shutil
import socket
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    import torch

# torch and the library are imported where they are used: the process that hands the tests to the workers reads this
# file too, and importing torch there held back the workers' start by about 1.4 s


def tiny_config(**overrides):
    """Hidden 16, 4 heads, 2+2 layers: big enough to have every part, small enough to be instant."""
    from transformer import TransformerConfig

    values = {
        "src_vocab_size": 13,
        "tgt_vocab_size": 11,
        "d_model": 16,
        "n_heads": 4,
        "n_encoder_layers": 2,
        "n_decoder_layers": 2,
        "d_ff": 32,
        "dropout": 0.0,
        "max_len": 32,
        "pad_id": 0,
    }
    values.update(overrides)
    return TransformerConfig(**values)


THREADS = pytest.StashKey[int]()  # the test process's own torch threads (tests/run.sh: OMP_NUM_THREADS=1)


@pytest.fixture(autouse=True)
def keep_threads(request):
    """Each test starts and ends on the process's own torch thread count, as it was once the tests were collected: a
    command's main sets its own for its process, and so may a module's fixture before this one runs (the survey's did,
    and every later module of that process then ran on two threads); float sums depend on it."""
    import torch

    threads = request.config.stash[THREADS]
    torch.set_num_threads(threads)
    yield
    torch.set_num_threads(threads)


@pytest.hookimpl(wrapper=True)
def pytest_collection(session):
    """Python's cyclic garbage collector rests while a process collects the tests, and what collecting made is then
    frozen (gc.freeze), so that later collections walk only what the tests make. Collecting imports torch, gradio,
    transformers and the project, whose objects live for the whole run, and each full collection walked all of them
    again: a fast loop's worker spent 2 s in collections while collecting, 3-4 s more during its tests, and 3 s in the
    five that pytest makes as the session ends."""
    gc.disable()
    try:
        return (yield)
    finally:
        gc.freeze()
        gc.enable()


def pytest_collection_finish(session):  # in each process that runs tests (not in the one that hands them out)
    import torch

    session.config.stash[THREADS] = torch.get_num_threads()


@pytest.fixture
def model():
    import torch

    from transformer import Transformer

    torch.manual_seed(0)
    return Transformer(tiny_config()).eval()


def random_ids(generator: torch.Generator, batch: int, length: int, vocab: int, lengths=None) -> torch.Tensor:
    """Ids in 3..vocab-1 (never pad/bos/eos), right-padded with 0 after `lengths[b]` tokens when given."""
    import torch

    ids = torch.randint(3, vocab, (batch, length), generator=generator)
    if lengths is not None:
        for b, n in enumerate(lengths):
            ids[b, n:] = 0
    return ids


def tiny_pipelines():
    """Untrained tiny models with real tokenizers, for app and figure tests that must not depend on training."""
    import torch

    from training.reversal import REVERSAL_ALPHABET
    from transformer import Transformer
    from transformer.hub import Seq2SeqPipeline
    from transformer.tokenizer import Tokenizer

    chars = Tokenizer.characters(REVERSAL_ALPHABET)
    texts = ["Ich habe Hunger.", "I am hungry.", "Das ist ein Haus.", "This is a house.", "<b>fett</b> & mehr"] * 5
    bpe = Tokenizer.train_bpe(texts, vocab_size=90, min_frequency=1)
    pipelines = {}
    for name, tok, max_len in (("reverse", chars, 24), ("de-en", bpe, 20)):
        torch.manual_seed(0)
        cfg = tiny_config(
            src_vocab_size=tok.vocab_size, tgt_vocab_size=tok.vocab_size, max_len=max_len, share_embeddings=True
        )
        pipelines[name] = Seq2SeqPipeline(Transformer(cfg), tok, name=name)
    return pipelines


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="session", autouse=True)
def page_cache(tmp_path_factory):
    """The page copies that the tests' apps and commands make are kept in this test process's own cache
    (copies.CACHE, and ATTENTION_LAB_CACHE for the processes it starts), never in the user's: runs left their tiny
    models' copies in ~/.cache/attention-lab (62 MB of them here)."""
    from attention_lab.page_copy import copies

    cache = tmp_path_factory.mktemp("attention-lab-cache")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("ATTENTION_LAB_CACHE", str(cache))
        patch.setattr(copies, "CACHE", cache / "page")
        yield cache / "page"


@pytest.fixture(scope="session", autouse=True)
def temporary_files(tmp_path_factory):
    """The temporary files that the tests' apps and commands write (a live page or a lesson made to download, 15 MB
    each) go to this test process's own temporary folder (tempfile's, and TMPDIR for the processes it starts), which
    pytest removes with its older runs: runs had left 541 such folders in /tmp here."""
    import tempfile

    folder = tmp_path_factory.mktemp("tmp")
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(tempfile, "tempdir", str(folder))
        patch.setenv("TMPDIR", str(folder))
        yield folder


@pytest.fixture(scope="session")
def cached_copies(bundled, page_cache, bundled_copies):
    """This run's copies of the bundled models (bundled_copies: what an app makes, from the same graphs) laid in this
    test process's cache (page_cache), where an app on the bundled checkpoints, in this process or one it starts, finds
    them made rather than making them again (two exports with the gradients graph, a minute of CPU)."""
    import os

    from filelock import FileLock

    from attention_lab.page_copy import copies

    for name, made in bundled_copies.items():
        folder = copies.home(bundled.entries[name])
        folder.parent.mkdir(parents=True, exist_ok=True)
        with FileLock(f"{folder}.lock"):  # as copies.make takes it
            if not copies.is_made(folder):
                shutil.rmtree(folder, ignore_errors=True)
                shutil.copytree(made, folder, copy_function=os.link)


@pytest.fixture(scope="session")
def served_app(tmp_path_factory, cached_copies):
    """The real app on the bundled checkpoints, launched in-process once for the whole run: (url, registry, demo).
    Its models' copies are laid in its cache before it starts (cached_copies)."""
    from attention_lab.models.registry import load_models

    registry = load_models([])
    with exports_shared(tmp_path_factory, gradients=True):
        yield from launched(registry)


def launched(registry, tabs=None):
    """The app over `registry` served in this process: (url, registry, demo) until the generator is closed."""
    from attention_lab.app import build_demo, launch_options

    demo = build_demo(registry) if tabs is None else build_demo(registry, tabs)
    port = free_port()
    demo.launch(server_name="127.0.0.1", server_port=port, prevent_thread_lock=True, quiet=True, **launch_options())
    yield f"http://127.0.0.1:{port}/", registry, demo
    close_app(demo)


def close_app(demo) -> None:
    """Stop a served app. gradio's close sets an asyncio Event from this thread while the server's event loop may be
    adding a waiter to it (seen once: "deque mutated during iteration"); the flag is set by then, so closing again
    finishes the rest."""
    for attempt in range(3):
        try:
            demo.close()
            return
        except RuntimeError as err:
            if "mutated during iteration" not in str(err) or attempt == 2:
                raise


@pytest.fixture(scope="session")
def ding(tmp_path_factory):
    """The Ding corpus's splits (train, valid, test and phrases .tsv), extracted once per run (built_once) as `python
    -m training.data ding` does, from Debian's trans-de-en (which the test command installs); tests only read them."""
    from training.data import prepare_ding

    return built_once(tmp_path_factory, "ding", prepare_ding)


@pytest.fixture(scope="session")
def bundled():
    """The bundled checkpoints, read with their model cards (so trained_lengths and the examples are set)."""
    from attention_lab.models.registry import load_models

    return load_models([])


CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"  # Debian's; playwright cannot download its own here
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update"]
CHROMIUM_ARGS += ["--disable-sync", "--no-first-run", "--disable-quic"]


# Gradio 6.31's status tracker asks for an animation frame on every frame, forever, to update the time it shows for
# a pending event, in every page, idle or not (a bare gr.Textbox app does it): about 0.08 of a core a page, measured
# in this Chromium (two idle pages: 0.16 of a core, 0.017 with this). In the tests' pages it asks once a second.
STATUS_TIMER_EACH_SECOND = """(() => {
  const frame = window.requestAnimationFrame.bind(window);
  window.requestAnimationFrame = (callback) => ((new Error().stack || "").includes("/statustracker")
    ? setTimeout(() => frame(callback), 1000) : frame(callback));
})()"""


@pytest.fixture(scope="session")
def browser():
    """One Chromium for every browser test (tests/test_browser*.py), driven by Playwright; each page it opens has
    Gradio's status timer ticking once a second (STATUS_TIMER_EACH_SECOND)."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        new_page, new_context = browser.new_page, browser.new_context

        def page(*args, **kwargs):
            made = new_page(*args, **kwargs)
            made.add_init_script(STATUS_TIMER_EACH_SECOND)  # before the page's first address is opened
            return made

        def context(*args, **kwargs):
            made = new_context(*args, **kwargs)
            made.add_init_script(STATUS_TIMER_EACH_SECOND)
            return made

        browser.new_page, browser.new_context = page, context
        yield browser
        browser.close()


@pytest.fixture(autouse=True)
def pages_closed(request):
    """A browser test's pages are closed when it ends: an open Gradio page keeps drawing frames (about a tenth of a
    core each), so pages left open slow every test after them. Pages that a module's or the session's fixtures opened
    before the test (set up first, as wider fixtures are) stay open for the tests that share them."""
    if "browser" not in request.fixturenames:
        yield
        return
    browser = request.getfixturevalue("browser")
    before = set(browser.contexts)
    yield
    for context in browser.contexts:
        if context not in before:
            context.close()


BUILT = "ATTENTION_LAB_TESTS_BUILT"  # a run's shared folder, for a run of the tests that a test starts (built_once)


def built_folder(tmp_path_factory) -> Path:
    """This run's shared temporary folder, where built_once keeps what it makes; that of the run named by BUILT in the
    environment, for a run of the tests that a test starts to share (tests/test_new_feature.py)."""
    import os

    if os.environ.get(BUILT):
        return Path(os.environ[BUILT])
    shared = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):  # each worker's folder lies in the run's own
        shared = shared.parent
    return shared


def built_once(tmp_path_factory, name: str, build) -> Path:
    """The folder `name` of this run's shared temporary folder (built_folder), made by `build(folder)` once per run:
    the first test process to ask builds it under a lock, and the others (pytest-xdist's workers) wait for it and
    share it. A build that failed half-way is made again. Tests only read what is in it."""
    from filelock import FileLock

    folder = built_folder(tmp_path_factory) / name
    with FileLock(f"{folder}.lock"):
        if not (folder / ".built").is_file():
            shutil.rmtree(folder, ignore_errors=True)
            folder.mkdir(parents=True)
            build(folder)
            (folder / ".built").touch()
    return folder


def exported_shared(model, tmp_path_factory, gradients: bool = False):
    """page_copy.graphs.exported(model, gradients), made once per run for the same model (its class, configuration,
    rules and every tensor's bytes) and shared by the run's processes (an export takes seconds: most tests read the
    graphs, not how they were traced). Kept in the run's shared folder as the graphs' files. The gradients graph (half
    a minute a model) only where asked: for the models whose explanations the tests make in the page
    (explained_models). The other graphs are traced once either way: with the gradients graph, they are read back from
    the export without it (a tiny Marian's took 29 s, and was made twice a run when both were asked for)."""
    import hashlib
    import json

    import onnx

    from attention_lab.page_copy import explanations, graphs

    described = [type(model).__qualname__, repr(model.config), repr(getattr(model, "rules", None))]
    if hasattr(model, "hf"):  # a transformers model's own configuration, but the folder it was read from
        own = {k: v for k, v in model.hf.config.to_dict().items() if k != "_name_or_path"}
        described.append(json.dumps(own, sort_keys=True, default=str))
    digest = hashlib.sha256(" ".join(described).encode())
    for name, tensor in model.state_dict().items():
        digest.update(name.encode())
        digest.update(tensor.detach().cpu().contiguous().numpy().tobytes())
    base = built_once(
        tmp_path_factory, f"exported-{digest.hexdigest()[:16]}", lambda f: kept(graphs.exported(model, False), f)
    )
    if not gradients:
        return read_exported(base)

    def with_gradients(folder):
        # each graph of the export without it, its weights back inside (read from the shared weights' file), then
        # the gradients graph, all stored as graphs.exported stores them
        made = {name: onnx.load_from_string(data) for name, data in read_exported(base).graphs().items()}
        for graph in made.values():
            onnx.load_external_data_for_model(graph, str(base))
        differentiating = [graph for graph in explanations.ANALYSES if graph.gradients]
        made.update(graphs.traced_analyses(model, True, differentiating))
        analyses = {graph.name: made[graph.name] for graph in explanations.ANALYSES if graph.name in made}
        kept(graphs.stored(made["encoder"], made["decoder"], analyses), folder)

    return read_exported(built_once(tmp_path_factory, f"exported-{digest.hexdigest()[:16]}-gradients", with_gradients))


def kept(made, folder: Path) -> None:
    """An Exported written into `folder`: its graphs' files ({name}.onnx), their weights' file and the names of its
    explanations' graphs."""
    import json

    from attention_lab.page_copy.graphs import WEIGHTS

    for name, data in made.graphs().items():
        (folder / f"{name}.onnx").write_bytes(data)
    (folder / WEIGHTS).write_bytes(made.weights)
    (folder / "analyses.json").write_text(json.dumps(list(made.analyses)))


def read_exported(folder: Path):
    """The Exported that `kept` wrote into `folder`."""
    import json

    from attention_lab.page_copy import graphs

    read = lambda name: (folder / name).read_bytes()
    analyses = json.loads(read("analyses.json"))
    return graphs.Exported(
        read("encoder.onnx"), read("decoder.onnx"), read(graphs.WEIGHTS), {n: read(f"{n}.onnx") for n in analyses}
    )


@contextlib.contextmanager
def exports_shared(tmp_path_factory, gradients: bool = False):
    """While it lasts, page copies and live pages are made from graphs exported once per run (exported_shared), with
    the gradients graph if `gradients`."""
    from attention_lab.page_copy import copies

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(copies, "exported", lambda model: exported_shared(model, tmp_path_factory, gradients))
        yield


@pytest.fixture
def exported_once(tmp_path_factory):
    """For a test of what is made from a model's graphs (a copy, a precision, a live page written again, the app's
    copy in the background), not of how they are traced: exports_shared for the test."""
    with exports_shared(tmp_path_factory):
        yield


@pytest.fixture(scope="session")
def pip_installed(tmp_path_factory):
    """The project as a user installs it, `pip install .` from a clean copy of the repository (no .git, build, data,
    runs or node_modules: what the package carries comes with it), in a fresh virtual environment: its python. The
    packages of the environment the tests run in are visible beneath it (a .pth file), so nothing is downloaded.
    Built once per run (built_once); tests may add to it (a Jupyter kernel) but not change what pip installed."""
    return built_once(tmp_path_factory, "pip-installed", install_into_a_venv) / "venv" / "bin" / "python"


def install_into_a_venv(folder) -> None:
    """A clean copy of the repository in `folder`/source, installed by pip into a new environment `folder`/venv."""
    import subprocess
    import sys
    import sysconfig
    import venv
    from pathlib import Path

    repo = Path(__file__).resolve().parent.parent
    left_out = shutil.ignore_patterns(".git", "build", "*.egg-info", "__pycache__", "data", "runs", "node_modules")
    shutil.copytree(repo, folder / "source", ignore=left_out)  # setuptools builds inside the folder it is given
    venv.create(folder / "venv")
    python = folder / "venv" / "bin" / "python"
    inner = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    outer = {sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]}
    (Path(inner) / "tests-environment.pth").write_text("".join(f"{path}\n" for path in sorted(outer)))
    pip = [sys.executable, "-m", "pip", "--python", str(python), "install", "--quiet", "--no-build-isolation"]
    done = subprocess.run(  # this pip, into that environment, building with this environment's setuptools
        [*pip, str(folder / "source")],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]


@pytest.fixture(scope="module")
def app_page(served_app, browser):
    """One page on the served app for a module's browser tests (tests/browser.py: `shared`; each test starts with
    `fresh`)."""
    from tests.browser import shared

    page = shared(browser, served_app[0])
    yield page
    page.close()


@pytest.fixture(scope="session")
def bundled_copies(bundled, tmp_path_factory):
    """The bundled models' page copies (page_copy/copies.py: their graphs, weights, tokenizer.json and config.json),
    made once per run (built_once) for every test that reads them (an export takes seconds); tests only read them.
    Not the user's cache, where an app started from another folder's code keeps its own copies, not these."""
    from attention_lab.page_copy import copies as page_copy

    def build(root):
        with exports_shared(tmp_path_factory, gradients=True):
            for name in ("de-en", "reverse"):
                page_copy.make(bundled.entries[name], root / name, training=bundled.snapshots)

    root = built_once(tmp_path_factory, "copies", build)
    return {name: root / name for name in ("de-en", "reverse")}


@pytest.fixture(scope="session")
def tiny_hf_models(tmp_path_factory):
    """A tiny random Marian and BART (tests/hf_models.py), each saved with save_pretrained and its float32 page copy
    beside it, made once per run (built_once): family -> (model folder, copy folder). BART's copy is made without the
    gradients graph: torch's exporter takes 28 s to write one that ONNX Runtime cannot run (a ScatterElements of the
    wrong rank), which the export then leaves out (page_copy/graphs.py runs_as_traced, tested on its own in
    test_live.py): its copy is the same either way."""
    import attention_lab.adapters  # noqa: F401 - the transformers families load through load_pretrained
    from attention_lab.page_copy import copies as page_copy
    from tests import hf_models
    from transformer import load_pretrained

    def build(root):
        for family in ("marian", "bart"):
            pipeline = load_pretrained(str(hf_models.FAMILIES[family](root / family)))
            (root / f"{family}-copy").mkdir()
            with exports_shared(tmp_path_factory, gradients=family != "bart"):
                files = page_copy.copy_files(pipeline, family, "float32")
            for name, data in files.items():
                (root / f"{family}-copy" / name).write_bytes(data)

    root = built_once(tmp_path_factory, "tiny-hf-models", build)
    return {family: (root / family, root / f"{family}-copy") for family in ("marian", "bart")}


@pytest.fixture(scope="session")
def explained_models(bundled_copies, tiny_hf_models):
    """The models whose explanations the page makes in the tests (tests/test_explain_in_page.py and the tabs' own):
    each one's pipeline and its float32 page copy's folder, both bundled models, a tiny random Marian and BART."""
    import attention_lab.adapters  # noqa: F401 - the transformers families load through load_pretrained
    from transformer import bundled, load_pretrained

    found = {name: (load_pretrained(bundled(name)), bundled_copies[name]) for name in ("de-en", "reverse")}
    for family, (model, copy) in tiny_hf_models.items():
        found[family] = (load_pretrained(str(model)), copy)
    return found
