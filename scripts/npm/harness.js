#!/usr/bin/env node
// The `harness` command of the npm package: runs the harness executable of
// this platform, which npm installed as an optional dependency
// (@harness-agent/OS-ARCH, selected by its "os" and "cpu"), with the same
// arguments, standard streams and exit status. No download, no install
// script: the executables are in the platform package.
"use strict";
const { spawnSync } = require("child_process");
const path = require("path");

const platform = `${process.platform}-${process.arch}`;
const pkg = `@harness-agent/${platform}`;
let dir;
try {
  dir = path.dirname(require.resolve(`${pkg}/package.json`));
} catch (e) {
  process.stderr.write(
    `ERROR [ENV_SETUP] no harness executables for ${platform}: the package ${pkg} is not installed\n` +
      `hint: npm installs it as an optional dependency of @harness-agent/harness; reinstall without --omit=optional ` +
      `(or --no-optional), or use a release archive (linux, darwin: x64, arm64; win32: x64)\n`
  );
  process.exit(2);
}
const exe = path.join(dir, "bin", process.platform === "win32" ? "harness.exe" : "harness");
const r = spawnSync(exe, process.argv.slice(2), { stdio: "inherit" });
if (r.error) {
  process.stderr.write(`ERROR [ENV_SETUP] cannot run ${exe}: ${r.error.message}\n`);
  process.exit(2);
}
if (r.signal) {
  process.kill(process.pid, r.signal);
}
process.exit(r.status === null ? 1 : r.status);
