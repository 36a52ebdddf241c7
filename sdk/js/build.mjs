#!/usr/bin/env node
// Builds a Warden JavaScript hook or tool into a WebAssembly component with componentize-qjs.
//
//   node build.mjs --wit DIR --world hook|tool --source FILE --out FILE
//                  [--componentize-qjs DIR] [--capabilities LIST] [--opt-size] [--stub-wasi] [--keep-temp]
//
// It works from a scratch directory, so it needs nothing beside itself but `warden.js` (the
// SDK module, imported by user code as "warden"):
//   1. copies the WIT package and adds a world that imports only `warden:plugin/log` and the
//      capability interfaces the sources name (`warden:plugin/fs`, `exec`, `http`, `env`), or
//      those of `--capabilities` (warden.toml's names: fs, net, env, exec; "" for none),
//      since a component importing an ungranted capability is refused by the host;
//   2. copies the .js/.mjs/.json files of the source's directory (recursively; dot-directories,
//      `wasm/` and `target/` left out) and installs the SDK as the package "warden" beside them;
//   3. runs componentize-qjs (non-async runtime) on the entry file and writes the component.
// Exit status: 0 built, 1 build failed, 2 bad arguments or componentize-qjs missing.

import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { basename, dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const PINNED = "0.4.5";
const ENV_VAR = "WARDEN_COMPONENTIZE_QJS";
const INSTALL_HINT =
  `install it with \`npm install componentize-qjs@${PINNED}\` (in any directory), then pass that ` +
  `directory's node_modules/componentize-qjs with --componentize-qjs DIR or ${ENV_VAR}=DIR`;
const CAPABILITIES = ["fs", "exec", "http", "env"];
const HERE = dirname(fileURLToPath(import.meta.url));

function usage(message) {
  if (message) process.stderr.write(`warden-js-build: ${message}\n`);
  process.stderr.write(
    "usage: node build.mjs --wit DIR --world hook|tool --source FILE --out FILE " +
      "[--componentize-qjs DIR] [--capabilities LIST] [--opt-size] [--stub-wasi] [--keep-temp]\n",
  );
  process.exit(2);
}

function parseArgs(argv) {
  const opts = { optSize: false, stubWasi: false, keepTemp: false };
  const valued = {
    "--wit": "wit",
    "--world": "world",
    "--source": "source",
    "--out": "out",
    "--componentize-qjs": "cqjs",
    "--capabilities": "capabilities",
  };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const [flag, inline] = a.startsWith("--") && a.includes("=") ? [a.slice(0, a.indexOf("=")), a.slice(a.indexOf("=") + 1)] : [a, undefined];
    if (flag in valued) {
      const v = inline ?? argv[++i];
      if (v === undefined) usage(`${flag} needs a value`);
      opts[valued[flag]] = v;
    } else if (flag === "--opt-size") opts.optSize = true;
    else if (flag === "--stub-wasi") opts.stubWasi = true;
    else if (flag === "--keep-temp") opts.keepTemp = true;
    else if (flag === "-h" || flag === "--help") usage();
    else usage(`unknown argument ${a}`);
  }
  for (const k of ["wit", "world", "source", "out"]) if (!opts[k]) usage(`--${k} is required`);
  return opts;
}

// --- componentize-qjs ------------------------------------------------------------------------

function packageDir(candidate) {
  for (const dir of [candidate, join(candidate, "componentize-qjs"), join(candidate, "node_modules", "componentize-qjs")]) {
    try {
      const pkg = JSON.parse(readFileSync(join(dir, "package.json"), "utf8"));
      if (pkg.name === "componentize-qjs") return { dir, version: pkg.version };
    } catch {
      // not this one
    }
  }
  return undefined;
}

/** Finds componentize-qjs: the flag, the environment variable, the working directory's node_modules, node's global modules. */
function locateComponentize(flag) {
  const explicit = flag ?? process.env[ENV_VAR];
  if (explicit) {
    const found = packageDir(resolve(explicit));
    if (!found) {
      fail(2, `componentize-qjs not found at ${explicit} (from ${flag ? "--componentize-qjs" : ENV_VAR}); ${INSTALL_HINT}`);
    }
    return found;
  }
  try {
    const main = createRequire(join(process.cwd(), "noop.js")).resolve("componentize-qjs/package.json");
    const found = packageDir(dirname(main));
    if (found) return found;
  } catch {
    // not installed under the working directory
  }
  const globalDir = join(dirname(dirname(process.execPath)), "lib", "node_modules");
  const found = packageDir(globalDir);
  if (found) return found;
  fail(
    2,
    `the npm package componentize-qjs (${PINNED}) is not installed: looked at --componentize-qjs, ${ENV_VAR}, ` +
      `node_modules above ${process.cwd()} and ${globalDir}; ${INSTALL_HINT}`,
  );
}

class BuildError extends Error {
  constructor(code, message) {
    super(message);
    this.code = code;
  }
}

function fail(code, message) {
  throw new BuildError(code, message);
}

// --- WIT --------------------------------------------------------------------------------------

/** The body of `world NAME { ... }` in the WIT text, with the file's package line. */
function findWorld(witDir, world) {
  const files = readdirSync(witDir).filter((f) => f.endsWith(".wit")).sort();
  for (const f of files) {
    const textOf = readFileSync(join(witDir, f), "utf8");
    const m = new RegExp(`(^|\\n)\\s*world\\s+${world.replace(/[^\w-]/g, "")}\\s*\\{`).exec(textOf);
    if (!m) continue;
    const open = m.index + m[0].length;
    let depth = 1;
    let i = open;
    for (; i < textOf.length && depth > 0; i++) {
      if (textOf[i] === "{") depth++;
      else if (textOf[i] === "}") depth--;
    }
    const pkg = /^\s*package\s+[^;]+;/m.exec(textOf);
    if (!pkg) fail(1, `${f} defines world ${world} but has no package line`);
    return { pkg: pkg[0].trim(), body: textOf.slice(open, i - 1) };
  }
  fail(2, `no world named ${world} in ${witDir}`);
}

/** The JavaScript names of the functions the world exports (`handle`; `describe`, `invoke`). */
function worldExports(witDir, world) {
  const { body } = findWorld(witDir, world);
  return [...body.matchAll(/^\s*export\s+(%?[a-z][a-z0-9-]*)\s*:\s*func\b/gm)].map((m) =>
    m[1].replace(/^%/, "").replace(/-([a-z0-9])/g, (_, c) => c.toUpperCase()),
  );
}

const EXAMPLES = {
  hook: "export const handle = hook((event) => ...)",
  tool: "export const { describe, invoke } = tool({ name, description, inputSchema, invoke(input) { ... } })",
};

/**
 * The module componentize-qjs runs: it re-exports the user's functions and fails the build,
 * with a message naming them, when one is missing (componentize-qjs itself would build a
 * component that traps on every call).
 */
function entryModule(userFile, world, exports) {
  const names = exports.map((n) => `\`${n}\``).join(", ");
  return [
    `import * as plugin from ${JSON.stringify(`./${userFile}`)};`,
    `const missing = ${JSON.stringify(exports)}.filter((n) => typeof plugin[n] !== "function");`,
    `if (missing.length > 0) {`,
    `  throw new Error(${JSON.stringify(`${userFile} must export `)} + missing.map((n) => "\`" + n + "\`").join(" and ") +`,
    `    ${JSON.stringify(` (a ${world} exports ${names})${EXAMPLES[world] ? `, e.g. \`${EXAMPLES[world]}\`` : ""}`)});`,
    `}`,
    ...exports.map((n) => `export const ${n} = plugin.${n};`),
    ``,
  ].join("\n");
}

/** A world like WORLD that imports only `log` and the capability interfaces in `caps`. */
function trimmedWorld(witDir, world, caps, name) {
  const { pkg, body } = findWorld(witDir, world);
  const lines = body.split("\n");
  const included = lines.some((l) => /^\s*include\s+imports\s*;/.test(l));
  const kept = lines.filter((l) => !/^\s*include\s+imports\s*;/.test(l));
  const imports = included ? ["log", ...caps].map((c) => `    import ${c};`) : [];
  return `${pkg}\n\n// Written by warden's build.mjs: world ${world} with only the imports the sources use.\nworld ${name} {\n${imports.join("\n")}\n${kept.join("\n")}\n}\n`;
}

// --- sources ----------------------------------------------------------------------------------

const SKIP_DIRS = new Set(["wasm", "target"]);
const COPY_EXT = /\.(m?js|json)$/;

function copySources(from, to, found = []) {
  mkdirSync(to, { recursive: true });
  for (const entry of readdirSync(from, { withFileTypes: true })) {
    if (entry.name.startsWith(".")) continue;
    const src = join(from, entry.name);
    const dst = join(to, entry.name);
    if (entry.isDirectory()) {
      if (!SKIP_DIRS.has(entry.name)) copySources(src, dst, found);
    } else if (entry.isFile() && COPY_EXT.test(entry.name)) {
      cpSync(src, dst);
      if (!entry.name.endsWith(".json")) found.push(dst);
    }
  }
  return found;
}

/** Capability names as warden.toml spells them, and the WIT interface each grants. */
const CAPABILITY_INTERFACE = { fs: "fs", net: "http", env: "env", exec: "exec" };

/** The interfaces of `--capabilities fs,net,...` (warden.toml's names). */
function declaredCapabilities(list) {
  const names = list.split(",").map((s) => s.trim()).filter(Boolean);
  for (const n of names) {
    if (!(n in CAPABILITY_INTERFACE)) fail(2, `--capabilities: unknown capability ${n}; expected some of fs, net, env, exec`);
  }
  const ifaces = new Set(names.map((n) => CAPABILITY_INTERFACE[n]));
  return CAPABILITIES.filter((c) => ifaces.has(c));
}

function usedCapabilities(files) {
  const caps = new Set();
  const re = /warden:plugin\/(fs|exec|http|env)\b/g;
  for (const f of files) {
    for (const m of readFileSync(f, "utf8").matchAll(re)) caps.add(m[1]);
  }
  return CAPABILITIES.filter((c) => caps.has(c));
}

// --- main -------------------------------------------------------------------------------------

async function main() {
  const opts = parseArgs(process.argv.slice(2));
  const major = Number(process.versions.node.split(".")[0]);
  if (major < 18) fail(2, `node ${process.versions.node} is too old: componentize-qjs needs node 18 or later`);

  const source = resolve(opts.source);
  if (!existsSync(source) || !statSync(source).isFile()) fail(2, `source ${opts.source} is not a file`);
  const witDir = resolve(opts.wit);
  if (!existsSync(witDir) || !statSync(witDir).isDirectory()) fail(2, `WIT directory ${opts.wit} does not exist`);
  const sdk = join(HERE, "warden.js");
  if (!existsSync(sdk)) fail(2, `the SDK module ${sdk} is missing beside build.mjs`);

  const cqjs = locateComponentize(opts.cqjs);
  if (cqjs.version !== PINNED) {
    process.stderr.write(`warden-js-build: warning: componentize-qjs ${cqjs.version} at ${cqjs.dir}; Warden is tested with ${PINNED}\n`);
  }

  const started = Date.now();
  const tmp = mkdtempSync(join(tmpdir(), "warden-js-"));
  try {
    // The user's sources and the SDK, under one module root.
    const appDir = join(tmp, "app");
    const sources = copySources(dirname(source), appDir);
    const exports = worldExports(witDir, opts.world);
    const entry = join(appDir, "__warden_entry__.mjs");
    writeFileSync(entry, entryModule(basename(source), opts.world, exports));
    const sdkDir = join(tmp, "node_modules", "warden");
    mkdirSync(sdkDir, { recursive: true });
    cpSync(sdk, join(sdkDir, "index.js"));
    writeFileSync(join(sdkDir, "package.json"), JSON.stringify({ name: "warden", type: "module", main: "index.js" }) + "\n");

    // The WIT, with a world that imports only what the sources use.
    const caps = opts.capabilities !== undefined ? declaredCapabilities(opts.capabilities) : usedCapabilities(sources);
    const wit = join(tmp, "wit");
    cpSync(witDir, wit, { recursive: true });
    const worldName = `warden-js-${opts.world}`;
    writeFileSync(join(wit, `${worldName}.wit`), trimmedWorld(witDir, opts.world, caps, worldName));

    const { componentize } = createRequire(import.meta.url)(join(cqjs.dir, "index.js"));
    let component;
    try {
      ({ component } = await componentize({
        witPath: wit,
        world: worldName,
        jsSource: readFileSync(entry, "utf8"),
        jsPath: entry,
        moduleRoot: tmp,
        sync: true,
        optSize: opts.optSize,
        stubWasi: opts.stubWasi,
      }));
    } catch (e) {
      // Paths in its messages are under the scratch module root: show the user's own.
      let message = String(e?.message ?? e)
        .replace(/^[:\s]+/, "")
        .replaceAll(`${appDir}/`, `${dirname(source)}/`)
        .replace(/(^|[\s'"(])\/app\//g, `$1${dirname(source)}/`)
        .split("\n")
        .filter((l) => !l.includes("__warden_entry__"))
        .join("\n");
      const missing = /resolving module '(warden:plugin\/[a-z]+)/.exec(message);
      if (missing && opts.capabilities !== undefined) {
        message += `\n(${missing[1]} is imported only with its capability: add it to --capabilities, that is to the component's capabilities in warden.toml)`;
      }
      fail(1, `componentize-qjs failed on ${relative(process.cwd(), source) || source}: ${message.trimEnd()}`);
    }
    const out = resolve(opts.out);
    mkdirSync(dirname(out), { recursive: true });
    writeFileSync(out, component);
    const secs = ((Date.now() - started) / 1000).toFixed(1);
    process.stderr.write(
      `warden-js-build: ${out}: ${component.length} bytes, world ${opts.world}, imports ${["log", ...caps].join(", ")}` +
        `${opts.stubWasi ? ", WASI stubbed" : ""}, componentize-qjs ${cqjs.version}, ${secs} s\n`,
    );
  } finally {
    if (opts.keepTemp) process.stderr.write(`warden-js-build: kept ${tmp}\n`);
    else rmSync(tmp, { recursive: true, force: true });
  }
}

try {
  await main();
} catch (e) {
  if (!(e instanceof BuildError)) throw e;
  process.stderr.write(`warden-js-build: ${e.message}\n`);
  process.exitCode = e.code;
}
