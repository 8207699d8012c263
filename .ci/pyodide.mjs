// Run a Python script under Pyodide (CPython in WebAssembly) with pe_reference importable.
//     node .ci/pyodide.mjs SCRIPT [ARGUMENT ...]
// The npm package pyodide must be installed where node resolves it
// (NODE_PATH, or a node_modules above the current folder).
import { createRequire } from "module";
import fs from "fs";
import path from "path";
import { pathToFileURL } from "url";

const require = createRequire(import.meta.url);
const entry = require.resolve("pyodide/pyodide.mjs", {
  paths: [process.cwd(), ...(process.env.NODE_PATH || "").split(path.delimiter).filter(Boolean)],
});
const { loadPyodide } = await import(pathToFileURL(entry).href);
const [script, ...args] = process.argv.slice(2);
const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), "..");
const pyodide = await loadPyodide();
pyodide.setStdout({ write: (bytes) => { process.stdout.write(bytes); return bytes.length; } });
pyodide.setStderr({ write: (bytes) => { process.stderr.write(bytes); return bytes.length; } });
pyodide.FS.mkdir("/work");
pyodide.FS.writeFile("/work/pe_reference.py", fs.readFileSync(path.join(root, "pe_reference.py")));
pyodide.FS.writeFile("/work/script.py", fs.readFileSync(script));
for (const [index, argument] of args.entries()) {
  if (fs.existsSync(argument)) {
    pyodide.FS.writeFile("/work/" + path.basename(argument), fs.readFileSync(argument));
    args[index] = "/work/" + path.basename(argument);
  }
}
const status = pyodide.runPython(`
import runpy, sys
sys.path.insert(0, "/work")
sys.argv = ["script.py"] + ${JSON.stringify(args)}
try:
    runpy.run_path("/work/script.py", run_name="__main__")
    status = 0
except SystemExit as exit:
    status = exit.code if isinstance(exit.code, int) else (0 if exit.code is None else 1)
status
`);
process.exit(status);
