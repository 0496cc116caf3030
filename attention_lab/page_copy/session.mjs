// A session of ONNX Runtime Web for one of the copy's graphs (model.mjs, the training snapshots).

// The runtime keeps the external data files of the session being made in one map of its module, by path, and
// empties the whole map once a session is made. Every graph here reads its weights as "weights.bin", so two sessions
// made at once (two models' copies loading, a snapshot beside its model) read each other's weights: a session made
// from another model's bytes at its own offsets decodes garbage with no error, or fails as the other empties the map
// ("Can't create a session. ERROR_CODE: 0"). So sessions are made one after another, by every bundle that shares
// the runtime: the queue is kept on the runtime's env, under a key every bundle names alike.
const QUEUE = Symbol.for("attentionLab.sessionsMade");

/** The runtime's session of `graph`, made once every session asked for before it is made. */
export function created(ort, graph, options) {
  const made = (ort.env[QUEUE] ?? Promise.resolve()).then(() => ort.InferenceSession.create(graph, options));
  ort.env[QUEUE] = made.catch(() => {});
  return made;
}
