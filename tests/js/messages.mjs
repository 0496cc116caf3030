// The page's messages against their JSON Schema (attention_lab/assets/messages.schema.json, generated from the
// server's typed records): what the modules' tests make up, and what the server really sends (tests/test_schema.py),
// are held to the same shapes.

import assert from "node:assert/strict";
import {readFileSync} from "node:fs";

import Ajv2020 from "ajv/dist/2020.js";

const SCHEMA = new URL("../../attention_lab/assets/messages.schema.json", import.meta.url);
let check = null;

/** The schema's validator (compiled once). */
export function validator() {
  if (!check) check = new Ajv2020({allErrors: true, strictTuples: false}).compile(JSON.parse(readFileSync(SCHEMA)));
  return check;
}

/** The schema's errors for `message`, as lines ("" when it is one of the page's messages). */
export function errors(message) {
  const validate = validator();
  if (validate(message)) return "";
  return (validate.errors || []).slice(0, 8).map((e) => `${e.instancePath || "/"} ${e.message}`).join("\n");
}

/** `message`, after asserting it is one of the page's messages. */
export function valid(message) {
  assert.equal(errors(message), "", `not a message of the page (${message && message.op})`);
  return message;
}
