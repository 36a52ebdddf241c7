// Module resolution hooks that let node run code written for a componentize-qjs component:
// "warden" is the SDK beside this directory, and the WIT interfaces `warden:plugin/*` are
// stand-ins (log records into globalThis.__wardenLog; the capabilities throw).
const SDK = new URL("../warden.js", import.meta.url).href;

const STUB = `
const records = (globalThis.__wardenLog ??= []);
const iface = (name) => new Proxy({}, { get: (_, f) => () => { throw new Error(name + "." + String(f) + " is not available under node"); } });
export const log = (level, message) => { records.push({ level, message }); };
export default { log };
`;
const CAPABILITY = (name) => `const x = new Proxy({}, { get: (_, f) => () => { throw new Error("${name}." + String(f) + " is not available under node"); } }); export default x;`;

export async function resolve(specifier, context, next) {
  if (specifier === "warden") return { url: SDK, shortCircuit: true };
  const m = /^warden:plugin\/([a-z]+)(@[\d.]+)?$/.exec(specifier);
  if (m) return { url: `warden-stub:${m[1]}`, shortCircuit: true };
  return next(specifier, context);
}

export async function load(url, context, next) {
  if (url.startsWith("warden-stub:")) {
    const name = url.slice("warden-stub:".length);
    return { format: "module", source: name === "log" ? STUB : CAPABILITY(name), shortCircuit: true };
  }
  return next(url, context);
}
