// Runs cases.json through hook.js under node (the SDK's node stand-ins for the host), so the
// scanner's rules can be checked without building the component:
//   node --test plugins/secret-scanner/tests/cases.test.mjs
// The same cases are run against the built component by Warden's own tests.
import "../../../sdk/js/test/register.mjs";
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";

const { handle } = await import("../hook.js");
const cases = JSON.parse(readFileSync(new URL("./cases.json", import.meta.url), "utf8"));

for (const c of cases) {
  test(c.name, () => {
    const r = handle({ name: c.event, input: JSON.stringify(c.input) });
    assert.equal(r.decision, c.expect.decision, r.reason ?? "");
    if (c.expect.reason_contains) assert.ok(r.reason?.includes(c.expect.reason_contains), r.reason ?? "(no reason)");
    if (c.expect.reason_excludes) assert.ok(!r.reason?.includes(c.expect.reason_excludes), "the reason echoes the secret");
  });
}
