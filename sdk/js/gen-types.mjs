#!/usr/bin/env node
// Regenerates types/wit/: TypeScript declarations of the WIT worlds `hook` and `tool`.
//
//   node gen-types.mjs --jco DIR WIT_DIR OUT_DIR
//
// DIR is an installed @bytecodealliance/jco (1.35.0: `npm install @bytecodealliance/jco@1.35.0`,
// then DIR = node_modules/@bytecodealliance/jco). This calls the type generator of `jco types`
// directly: the CLI cannot read the WIT because its WASI shim starts with no preopened
// directories, so this opens "/" for it first. Needs no network.

import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { pathToFileURL } from "node:url";

const args = process.argv.slice(2);
const at = args.indexOf("--jco");
if (at < 0 || args.length !== 4) {
  process.stderr.write("usage: node gen-types.mjs --jco DIR WIT_DIR OUT_DIR\n");
  process.exit(2);
}
const [jco] = args.splice(at, 2).slice(1);
const [wit, out] = args.map((p) => resolve(p));

/** The directory of package `name` as node would find it from `dir` (its package.json need not be exported). */
function findPackage(dir, name) {
  for (let d = dir; ; d = dirname(d)) {
    const candidate = join(d, "node_modules", name);
    if (existsSync(join(candidate, "package.json"))) return candidate;
    if (dirname(d) === d) throw new Error(`${name} not found from ${dir}`);
  }
}

// jco-transpile and the WASI shim it runs on, as jco resolves them.
const transpile = findPackage(resolve(jco), "@bytecodealliance/jco-transpile");
const shim = findPackage(transpile, "@bytecodealliance/preview2-shim");
const fs = await import(pathToFileURL(join(shim, "dist/nodejs/filesystem.js")));
fs._setPreopens({ "/": "/" });
const { generateGuestTypes } = await import(pathToFileURL(join(transpile, "dist/typegen.js")));

for (const world of ["hook", "tool"]) {
  const files = await generateGuestTypes(wit, { worldName: world, outDir: `${out}/` });
  for (const [name, data] of Object.entries(files)) {
    mkdirSync(dirname(name), { recursive: true });
    writeFileSync(name, data);
    process.stdout.write(`${name}\n`);
  }
}
