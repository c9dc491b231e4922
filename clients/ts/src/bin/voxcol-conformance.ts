#!/usr/bin/env node
// voxcol-conformance: the conformance runner of @voxcol/client (tests/conformance/README.md).
import { main } from "../conformance";

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    process.stderr.write(`voxcol-conformance: ${String(error)}\n`);
    process.exitCode = 2;
  },
);
