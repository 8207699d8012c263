// Run a Python script under MicroPython (WebAssembly) with pe_reference importable.
//     node .ci/micropython.mjs SCRIPT [ARGUMENT ...]
// The package @micropython/micropython-webassembly-pyscript must be installed
// where node resolves it (NODE_PATH, or a node_modules above this file).
import { createRequire } from "module";
import fs from "fs";
import path from "path";

const require = createRequire(import.meta.url);
const entry = require.resolve("@micropython/micropython-webassembly-pyscript/micropython.mjs", {
  paths: [process.cwd(), ...(process.env.NODE_PATH || "").split(path.delimiter).filter(Boolean)],
});
const { loadMicroPython } = await import(entry);
const [script, ...args] = process.argv.slice(2);
const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), "..");
const mp = await loadMicroPython({
  heapsize: 256 * 1024 * 1024,
  stdout: (data) => process.stdout.write(data),
  stderr: (data) => process.stderr.write(data),
  linebuffer: false,
});
mp.FS.mkdir("/work");
mp.FS.writeFile("/work/pe_reference.py", fs.readFileSync(path.join(root, "pe_reference.py")));
mp.FS.writeFile("/work/script.py", fs.readFileSync(script));
for (const [index, argument] of args.entries()) {
  // Files given as arguments are copied in too, under their base names.
  if (fs.existsSync(argument)) {
    mp.FS.writeFile("/work/" + path.basename(argument), fs.readFileSync(argument));
    args[index] = "/work/" + path.basename(argument);
  }
}
let status = 0;
try {
  mp.runPython(`
import sys
sys.path.insert(0, "/work")
_status = 0
try:
    # No sys.argv here: the script reads ARGUMENTS instead.
    exec(open("/work/script.py").read(), {"__name__": "__main__", "ARGUMENTS": ["script.py"] + ${JSON.stringify(args)}})
except SystemExit as exit:
    _status = exit.args[0] if exit.args else 0
`);
  status = mp.globals.get("_status") || 0;
} catch (error) {
  console.error(String(error));
  status = 1;
}
process.exit(status);
