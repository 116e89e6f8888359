// Debian's Chromium driven by playwright-core, for the console's browser tests (test/console/) and
// `npm run screenshots`: the one place that knows where it is, how to install it (the command the README
// and .ci/run both give) and the launch options known to work here. chromium.launch gives every launch a
// fresh, temporary user-data-dir. A missing browser is an error naming the install command, never a skip.
import { existsSync } from 'node:fs';
import { chromium, type Browser } from 'playwright-core';

export const CHROMIUM_PATH = '/usr/bin/chromium';

/** Installs Debian's Chromium when it is missing (with sudo unless root). README.md and .ci/run give exactly this. */
export const CHROMIUM_INSTALL_COMMAND = `command -v chromium >/dev/null || $(test "$(id -u)" = 0 || echo sudo) sh -c 'apt-get update && apt-get install -y chromium'`;

const ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

export class ChromiumMissingError extends Error {
  constructor() {
    super(`Chromium is not installed at ${CHROMIUM_PATH}; the console's browser tests need it. Install it with:\n  ${CHROMIUM_INSTALL_COMMAND}`);
  }
}

export async function launchChromium(): Promise<Browser> {
  if (!existsSync(CHROMIUM_PATH)) throw new ChromiumMissingError();
  return chromium.launch({ executablePath: CHROMIUM_PATH, args: ARGS, headless: true, timeout: 60_000 });
}
