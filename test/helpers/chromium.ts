import puppeteer, {Browser} from 'puppeteer-core';

/** Debian's Chromium, or the one CHROME_BIN names (as karma.conf.js). */
export const CHROMIUM = process.env.CHROME_BIN || '/usr/bin/chromium';

/** Why Node specs that drive Chromium are pending where it is missing. */
export const NO_CHROMIUM = `no Chromium at ${CHROMIUM}: install Debian's chromium or set CHROME_BIN`;

/**
 * Headless Chromium with karma.conf.js's flags (DESIGN.md §6): root needs --no-sandbox; WebGL
 * through SwiftShader; no network calls. `extraArgs` adds to them (WebGPU's, say).
 */
export function launchChromium(extraArgs: readonly string[] = []): Promise<Browser> {
  return puppeteer.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--no-sandbox', '--use-angle=swiftshader', '--enable-unsafe-swiftshader', '--ignore-gpu-blocklist',
      '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run',
      ...extraArgs,
    ],
  });
}
