// The conformance suite 0.2.0-alpha.12 (the newest; it covers 2026-07-28)
// asks for Node 22 only for fs.globSync, which collects its own result
// files. This hook hands its entry module an fs with a globSync that does
// that much (fsshim.mjs); nothing else of the suite is changed.
export async function load(url, context, next) {
  const r = await next(url, context);
  if (url.includes("/conformance-2026/dist/index.js")) {
    const shim = new URL("./fsshim.mjs", import.meta.url).href;
    const src = String(r.source);
    const patched = src.replace(/from\s*"fs"/, `from "${shim}"`).replace(/from\s*"node:fs"/, `from "${shim}"`);
    if (patched === src) throw new Error("conformance-2026 hooks: the suite no longer imports fs as expected; update interop/conformance-2026/hooks.mjs");
    return { ...r, source: patched };
  }
  return r;
}
