// Processes a test left behind: the interop scripts check that the managed
// Jupyter and its kernels are gone once the server stopped.
import { readdirSync, readlinkSync } from "node:fs";

// leftovers lists processes whose working directory is dir: the managed
// jupyter-server and its kernels run there, and all must be gone after shutdown.
export function leftovers(dir) {
  const found = [];
  for (const pid of readdirSync("/proc")) {
    if (!/^\d+$/.test(pid)) continue;
    try {
      if (readlinkSync(`/proc/${pid}/cwd`) === dir) found.push(pid);
    } catch {
      // Processes we may not inspect, or that exited meanwhile, are not ours.
    }
  }
  return found;
}

// waitGone waits up to ms for the processes working in dir to end, and
// returns those still there.
export async function waitGone(dir, ms) {
  const end = Date.now() + ms;
  let left = leftovers(dir);
  while (left.length > 0 && Date.now() < end) {
    await new Promise((r) => setTimeout(r, 200));
    left = leftovers(dir);
  }
  return left;
}
