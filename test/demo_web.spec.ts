import * as fs from 'node:fs';
import * as path from 'node:path';
import type {Browser, Page} from 'puppeteer-core';

import {DemoServer, startDemoServer} from '../demo/web/serve';
import type {DemoState} from '../demo/web/app';
import {CHROMIUM, launchChromium, NO_CHROMIUM} from './helpers/chromium';

/**
 * End to end: the browser demo (`npm run demo:web`) served locally and opened in headless
 * Chromium, training on webgl (SwiftShader here) for STEPS steps; the loss must fall, and a
 * screenshot of the page is kept in test-artifacts/ (not committed).
 */
const STEPS = 40;
/** Averages over this many steps at each end of the run: single batch losses are noisy. */
const WINDOW = 5;
const ARTIFACTS = path.resolve(__dirname, '..', 'test-artifacts');

/** Opens the demo with `query` and waits until it has trained or failed; its state and the page's errors. */
async function runDemo(browser: Browser, url: string, query: string): Promise<{page: Page; state: DemoState; pageErrors: string[]}> {
  const page = await browser.newPage();
  const pageErrors: string[] = [];
  page.on('pageerror', error => pageErrors.push(String(error)));
  await page.setViewport({width: 840, height: 640});
  await page.goto(`${url}?${query}`, {timeout: 120000});
  await page.waitForFunction(
      () => {
        const s = (window as unknown as {demoState?: DemoState}).demoState;
        return s !== undefined && (s.done || s.error !== undefined);
      },
      {timeout: 240000, polling: 500});
  const state = await page.evaluate(() => (window as unknown as {demoState: DemoState}).demoState);
  return {page, state, pageErrors};
}

describe('the browser demo in headless Chromium (webgl)', () => {
  if (!fs.existsSync(CHROMIUM)) {
    it('is skipped', () => pending(NO_CHROMIUM));
    return;
  }

  // One server (one bundle) and one browser for both specs.
  let server: DemoServer;
  let browser: Browser;
  beforeAll(async () => {
    server = await startDemoServer(0);
    // WebGPU on SwiftShader's Vulkan, as karma.conf.js.
    browser = await launchChromium(['--enable-unsafe-webgpu', '--use-webgpu-adapter=swiftshader']);
  }, 120000);
  afterAll(async () => {
    await browser?.close();
    await server?.close();
  });

  it(`trains for ${STEPS} steps with the loss falling, and saves a screenshot`, async () => {
    const {page, state, pageErrors} = await runDemo(browser, server.url, `steps=${STEPS}`);
    fs.mkdirSync(ARTIFACTS, {recursive: true});
    await page.screenshot({path: path.join(ARTIFACTS, 'demo-web.png')});

    expect(pageErrors).toEqual([]);
    expect(state.error).toBeUndefined();
    expect(state.backend).toBe('webgl');
    expect(state.losses.length).toBe(STEPS);
    expect(state.stepMs.length).toBe(STEPS);
    expect(await page.$$eval('#backend option', options => options.map(o => (o as HTMLOptionElement).value)))
        .toEqual(['webgl', 'webgpu', 'wasm', 'cpu']);
    const mean = (values: number[]) => values.reduce((a, b) => a + b, 0) / values.length;
    const first = mean(state.losses.slice(0, WINDOW));
    const last = mean(state.losses.slice(-WINDOW));
    expect(last).withContext(`losses ${state.losses.map(v => v.toFixed(3))}`).toBeLessThan(0.6 * first);
    await page.close();
  }, 300000);

  it('trains on the webgpu choice (?backend=webgpu) with the loss finite and a step time per step', async () => {
    const {page, state, pageErrors} = await runDemo(browser, server.url, 'backend=webgpu&steps=5');
    expect(pageErrors).toEqual([]);
    expect(state.error).toBeUndefined();
    expect(state.backend).toBe('webgpu');
    expect(state.losses.length).toBe(5);
    expect(state.losses.every(Number.isFinite)).toBe(true);
    expect(state.stepMs.length).toBe(5);
    await page.close();
  }, 300000);
});
