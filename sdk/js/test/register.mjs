// `node --import ./register.mjs`, or import it first: installs hooks.mjs.
import { register } from "node:module";
register("./hooks.mjs", import.meta.url);
