// A second thread for one of a copy's explanations' graphs: a Web Worker with a runtime of its own, holding the
// graph and the copy's weights, so that the page runs two parts of one measure at once (the Heads tab's importance:
// its encoder heads' rows here, its decoder heads' rows there). The same runtime, graph and weights as the page's own
// session, so the same values bit for bit; where a page cannot start one (no Worker, no runtime address: the Node
// tests), or it fails, the part runs on the page's thread as before.

// the address the page imported its runtime from (served.mjs, the live page), kept on the runtime's env under a key
// every bundle names alike (as session.mjs keeps its queue there): the worker imports the same
export const RUNTIME_ADDRESS = Symbol.for("attentionLab.runtimeAddress");

// the worker's own code: it imports the runtime, makes the graph's session, and runs it on what it is sent
const WORKER = `
let session, queue = Promise.resolve(); // one run at a time, in the order asked, as the page's own (model.mjs run)
const tensors = (ort, inputs) => Object.fromEntries(Object.entries(inputs).map(([k, t]) => [k, new ort.Tensor(t.type, t.data, t.dims)]));
addEventListener("message", ({data}) => { queue = queue.then(() => answer(data)); });
async function answer(data) {
  try {
    if (data.load) {
      const ort = await import(data.load.runtime);
      ort.env.wasm.numThreads = 1;
      ort.env.wasm.wasmBinary = data.load.wasm;
      const made = await ort.InferenceSession.create(data.load.graph, {executionProviders: ["wasm"],
        graphOptimizationLevel: "all", externalData: [{path: "weights.bin", data: data.load.weights}]});
      session = {ort, made};
      postMessage({id: data.id});
    } else {
      const out = await session.made.run(tensors(session.ort, data.inputs));
      const sent = Object.fromEntries(Object.entries(out).map(([k, t]) => [k, {data: t.data, dims: t.dims}]));
      postMessage({id: data.id, out: sent}, Object.values(sent).map((t) => t.data.buffer));
    }
  } catch (err) {
    postMessage({id: data.id, err: String(err?.message ?? err)});
  }
}`;

class Helper {
  constructor(worker) {
    Object.assign(this, {worker, asked: new Map(), next: 0, runs: 0});
    worker.addEventListener("message", ({data}) => {
      const {resolve, reject} = this.asked.get(data.id);
      this.asked.delete(data.id);
      if (data.err !== undefined) reject(new Error(data.err));
      else resolve(data.out);
    });
    worker.addEventListener("error", (event) => this.failed(new Error(event.message || "the worker failed")));
  }

  ask(message, transfer = []) {
    const id = this.next++;
    return new Promise((resolve, reject) => {
      this.asked.set(id, {resolve, reject});
      this.worker.postMessage({...message, id}, transfer);
    });
  }

  failed(err) {
    this.broken = err; // for good: every part after it runs on the page's thread
    for (const {reject} of this.asked.values()) reject(err);
    this.asked.clear();
  }

  /** The graph run on `inputs` (Tensors by name) on the worker's thread: each output by name as {data, dims}. */
  async run(inputs) {
    if (this.broken) throw this.broken;
    const sent = Object.fromEntries(Object.entries(inputs).map(([k, t]) => [k, {type: t.type, data: t.data, dims: t.dims}]));
    const out = await this.ask({inputs: sent});
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
  if (typeof Worker === "undefined" || !runtime || !wasm || !graph) throw new Error("no second thread here");
  const code = URL.createObjectURL(new Blob([WORKER], {type: "text/javascript"}));
  const helper = new Helper(new Worker(code, {type: "module", name: "attention-lab-helper"}));
  const weights = model.options.externalData[0].data;
  await helper.ask({load: {runtime, wasm, graph, weights}}); // copied to the worker as they are sent
  return helper;
}

/** Each of `asked` (the inputs of one run of `model`'s explanations' graph `name` each) run, the odd ones on the
 * graph's second thread where it is ready (the even ones meanwhile on the page's), the rest on the page's; in order. */
export function runAll(model, name, asked) {
  const helper = helperOf(model, name);
  return Promise.all(asked.map((inputs, i) => {
    if (!helper || helper.broken || i % 2 === 0) return model.explain(name, inputs);
    return helper.run(inputs).catch(() => model.explain(name, inputs)); // the worker failed: the page's thread
  }));
}
