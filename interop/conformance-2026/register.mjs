// Loaded with node --import: lets the conformance suite 0.2.0-alpha.12 run on
// Node 20 (see hooks.mjs).
import { register } from "node:module";
register("./hooks.mjs", import.meta.url);
