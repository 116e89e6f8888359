#!/usr/bin/env node
// The `emr-bridge` command. TypeScript sources run through tsx's loader, so `npm ci` needs no build step.
import './require-node.js';
import { register } from 'tsx/esm/api';

register();
const { main } = await import('../src/cli/main.ts');
const code = await main(process.argv.slice(2));
process.exitCode = code;
// Everything is closed by now; this only guards against a stray handle keeping a stopped server alive.
setTimeout(() => process.exit(code), 3000).unref();
