// A session of ONNX Runtime Web for one of the copy's graphs (model.mjs, the training snapshots).

/** The runtime's session of `graph`, tried once more after a pause if it fails: in a heavily loaded run, the
 * session of a graph that loads every other time failed once ("Can't create a session. ERROR_CODE: 0"). */
export async function created(ort, graph, options) {
  try {
    return await ort.InferenceSession.create(graph, options);
  } catch (err) {
    console.warn("a session failed; trying once more:", err);
    await new Promise((resolve) => setTimeout(resolve, 500));
    return ort.InferenceSession.create(graph, options);
  }
}
