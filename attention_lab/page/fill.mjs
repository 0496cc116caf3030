// The page asks for the slow outputs its views still wait for: an answer that could not bring them in time says
// so ({op: "ask"}), and this asks the server to send them when they are made (the component's "fill" event,
// attention_lab/page/wiring.py), once per answer that says so. Not where the page decodes the model and makes the
// open tab itself by the time the answer comes (its road: decoding/in_page.mjs; the tab opened while the copy's
// explanations' graphs loaded): the server's views would only come after the page's.

export function mount({props, watch, trigger}) {
  watch("value", () => {
    if (props.value && props.value.op === "ask" && !globalThis.attentionLabRoad?.makesOpenTab?.()) trigger("fill");
  });
}
