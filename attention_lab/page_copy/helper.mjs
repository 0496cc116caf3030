// A helper thread for one of a copy's explanations' graphs: a Web Worker with a runtime of its own, holding the
// graph and the copy's weights, so that the page runs two parts of one measure at once (the Heads tab's importance:
// its encoder heads' rows here, its decoder heads' rows there). The same runtime, graph and weights as the page's own
// session, so the same values bit for bit; where a page cannot start one (no Worker, no runtime address: the Node
// tests), or it fails, the part runs on the page's thread as before.

// the address the page imported its runtime from (served.mjs, the live page), kept on the runtime's env under a key
// every bundle names alike (as session.mjs keeps its queue there): the worker imports the same
export const RUNTIME_ADDRESS = Symbol.for("attentionLab.runtimeAddress");

// the worker's own code: it imports the runtime, makes the graph's session, and runs it on what it is sent (the
// inputs the graph reads: one exported before it took head masks has fewer, as model.mjs `fed` says)
const WORKER = `
let session, queue = Promise.resolve(); // one run at a time, in the order asked, as the page's own (model.mjs run)
addEventListener("message", ({data}) => { queue = queue.then(() => answer(data)); });
async function answer(data) {
  try {
    if (data.load) {
      const ort = await import(data.load.runtime);
      ort.env.wasm.numThreads = 1;
      ort.env.wasm.wasmBinary = data.load.wasm;
      const made = await ort.InferenceSession.create(data.load.graph, data.load.options);
      session = {ort, made};
      postMessage({id: data.id});
    } else {
      const fed = {};
      for (const name of session.made.inputNames) {
        const t = data.inputs[name];
        fed[name] = new session.ort.Tensor(t.type, t.data, t.dims);
      }
      const out = await session.made.run(fed);
      const sent = Object.fromEntries(Object.entries(out).map(([k, t]) => [k, {data: t.data, dims: t.dims}]));
      postMessage({id: data.id, out: sent}, Object.values(sent).map((t) => t.data.buffer));
    }
  } catch (err) {
    postMessage({id: data.id, err: String(err?.message ?? err)});
  }
}`;

/** A worker running one graph, asked by message: a run's answer, or the error it ended with. Once one fails
 * (`broken`), for good: every part after it runs on the page's thread, and the worker is ended. */
export class Helper {
  constructor(worker) {
    Object.assign(this, {worker, asked: new Map(), next: 0, runs: 0, broken: null});
    worker.addEventListener("message", ({data}) => {
      const asked = this.asked.get(data.id);
      if (!asked) return; // answered after the helper failed: its part already ran on the page's thread
      this.asked.delete(data.id);
      if (data.err !== undefined) asked.reject(new Error(data.err));
      else asked.resolve(data.out);
    });
    worker.addEventListener("error", (event) => {
      event.preventDefault?.(); // said once, as the helper's failure, not again as the page's error
      this.failed(new Error(event.message || "the worker failed"));
    });
  }

  ask(message) {
    const id = this.next++;
    return new Promise((resolve, reject) => {
      this.asked.set(id, {resolve, reject});
      this.worker.postMessage({...message, id});
    }).catch((err) => {
      this.failed(err);
      throw err;
    });
  }

  failed(err) {
    if (this.broken) return;
    this.broken = err;
    console.warn(`A helper thread stopped (${err.message}): its parts run on the page's own thread.`);
    for (const {reject} of this.asked.values()) reject(err);
    this.asked.clear();
    this.worker.terminate();
  }

  /** The graph run on `inputs` (Tensors by name) on the worker's thread: each output by name as {data, dims}. */
  async run(inputs) {
    if (this.broken) throw this.broken;
    const sent = Object.entries(inputs).map(([name, t]) => [name, {type: t.type, data: t.data, dims: t.dims}]);
    const out = await this.ask({inputs: Object.fromEntries(sent)});
    this.runs += 1;
    return out;
  }
}

/** The Helper of `model`'s explanations' graph `name` once it is ready, else null (and one is started, in the
 * background, for the next measure). Kept on the model (`model.helpers`: by name, {ready, started}). */
export function helperOf(model, name) {
  model.helpers ??= new Map();
  if (!model.helpers.has(name)) {
    const entry = {ready: null};
    entry.started = started(model, name).then((helper) => { entry.ready = helper; }, () => {});
    model.helpers.set(name, entry);
  }
  return model.helpers.get(name).ready;
}

async function started(model, name) {
  const runtime = model.ort.env[RUNTIME_ADDRESS], wasm = model.ort.env.wasm.wasmBinary;
  const graph = await model.analysisBytes?.(name);
  if (typeof Worker === "undefined" || !runtime || !wasm || !graph) throw new Error("no helper thread here");
  const code = URL.createObjectURL(new Blob([WORKER], {type: "text/javascript"}));
  const helper = new Helper(new Worker(code, {type: "module", name: "attention-lab-helper"}));
  // the page's own session options, its weights among them: copied to the worker as they are sent
  await helper.ask({load: {runtime, wasm, graph, options: model.options}});
  return helper;
}

/** Each of `asked` (the inputs of one run of `model`'s explanations' graph `name` each) run, the odd ones on the
 * graph's helper thread where it is ready (the even ones meanwhile on the page's), the rest on the page's; in order.
 * The helper is started after the first such measure, not beside it: its runtime compiles on the other core while
 * the page draws, not while the page measures. */
export async function runAll(model, name, asked) {
  const helper = model.helpers?.get(name)?.ready ?? null;
  const outs = await Promise.all(asked.map((inputs, i) => {
    if (!helper || helper.broken || i % 2 === 0) return model.explain(name, inputs);
    return helper.run(inputs).catch(() => model.explain(name, inputs)); // the worker failed: the page's thread
  }));
  if (asked.length > 1) helperOf(model, name);
  return outs;
}
