import { existsSync, readFileSync } from 'node:fs';
import { chromium, type Browser, type Page } from 'playwright-core';

export const CHROMIUM = '/usr/bin/chromium';

/** Why this machine cannot run browser tests, or null (scripts/ensure-chromium.sh installs Debian's package). */
export const noChromiumReason = (): string | null =>
  existsSync(CHROMIUM) ? null : `${CHROMIUM} is missing (apt-get install chromium; scripts/ensure-chromium.sh does)`;

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
