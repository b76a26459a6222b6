import { existsSync, readFileSync } from 'node:fs';
import { chromium, type Browser, type Page } from 'playwright-core';

export const CHROMIUM = '/usr/bin/chromium';

/** Why this machine cannot run browser tests, or null (scripts/ensure-chromium.sh installs Debian's package). */
export const noChromiumReason = (): string | null =>
  existsSync(CHROMIUM) ? null : `${CHROMIUM} is missing (apt-get install chromium; scripts/ensure-chromium.sh does)`;

/**
 * `describe(name, body)` where Chromium runs; in CI without it, one failing test (CI must run the browser tests);
 * elsewhere a skipped test that says why.
 */
export const describeInChromium = (name: string, body: () => void): void => {
  const reason = noChromiumReason();
  if (reason && process.env.CI) {
    describe(name, () => {
      it('has Chromium in CI (scripts/ensure-chromium.sh)', () => {
        throw new Error(`no Chromium in CI: ${reason}`);
      });
    });
  } else if (reason) {
    process.stdout.write(`${name}: skipped: no Chromium (${reason})\n`);
    describe(name, () => {
      // eslint-disable-next-line no-restricted-properties -- no Chromium here: reported as skipped, with why
      it.skip(`skipped: no Chromium (${reason})`, () => undefined);
    });
  } else {
    describe(name, body);
  }
};

/**
 * Debian's Chromium, headless, with the flags this machine needs: as root no sandbox; and no background networking,
 * component updates or sync, whose connections the closed network refuses. Playwright gives each launch a new,
 * empty profile.
 */
export const launchChromium = (): Promise<Browser> =>
  chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });

const AXE_SOURCE = readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');

export interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: Array<{ target: string[] }>;
}

/**
 * Runs axe-core in the page and answers its serious and critical violations. The engine is evaluated over the
 * DevTools protocol, which the page's Content-Security-Policy (no inline scripts) does not govern.
 */
export const seriousViolations = async (page: Page): Promise<AxeViolation[]> => {
  await page.evaluate(AXE_SOURCE);
  const violations = await page.evaluate(async () => {
    const axe = (globalThis as unknown as { axe: { run(): Promise<{ violations: AxeViolation[] }> } }).axe;
    return (await axe.run()).violations;
  });
  return violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
};
