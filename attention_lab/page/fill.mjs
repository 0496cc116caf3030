// The page asks for the slow outputs its views still wait for: an answer that could not bring them in time says
// so ({op: "ask"}), and this asks the server to send them when they are made (the component's "fill" event,
// attention_lab/page/wiring.py), once per answer that says so.

export function mount({props, watch, trigger}) {
  watch("value", () => {
    if (props.value && props.value.op === "ask") trigger("fill");
  });
}
