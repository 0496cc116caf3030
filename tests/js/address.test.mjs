import assert from "node:assert/strict";
import {test} from "node:test";

import {asked, linkOf} from "../../attention_lab/assets/address.mjs";

const KNOWN = {models: ["de-en", "reverse"], tabs: ["attention", "why", "flow"]};

test("a link's tab, model and source are taken when the page has them", () => {
  const wanted = asked("?tab=flow&model=reverse&source=abc+d%C3%A9", KNOWN);
  assert.deepEqual(wanted, {tab: "flow", model: "reverse", source: "abc dé", problems: []});
});

test("what a link asks for in vain is said, one line each, and the rest is still taken", () => {
  const wanted = asked("?tab=nope&model=xx&source=Hallo", KNOWN);
  assert.equal(wanted.tab, null);
  assert.equal(wanted.model, null);
  assert.equal(wanted.source, "Hallo");
  assert.equal(wanted.problems.length, 2);
  assert.match(wanted.problems[0], /No tab “nope” here/);
  assert.match(wanted.problems[1], /No model “xx” here .*de-en, reverse/);
});

test("an address that asks for nothing asks for nothing (a blank source included)", () => {
  assert.deepEqual(asked("?road=server&source=%20%20", KNOWN), {tab: null, model: null, source: null, problems: []});
});

test("the link of what the page shows keeps every other parameter and reads back as it was written", () => {
  const shown = {tab: "why", model: "de-en", source: "Ist es wahr, dass er einen Unfall hatte? & mehr"};
  const link = linkOf("http://127.0.0.1:7860/?presenter=1&road=server&tab=flow", shown);
  const address = new URL(link);
  assert.equal(address.searchParams.get("presenter"), "1");
  assert.equal(address.searchParams.get("road"), "server");
  assert.deepEqual(asked(address.search, {...KNOWN, tabs: [...KNOWN.tabs]}), {...shown, problems: []});
  assert.equal(new URL(linkOf(link, {tab: null, model: "de-en", source: ""})).searchParams.has("source"), false);
});
