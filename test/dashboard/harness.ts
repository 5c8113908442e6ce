/**
 * A dashboard webview in Debian's Chromium for the webview tests (test/dashboard/*.test.ts): the HTML and
 * CSP of client/dashboard/html.ts, the bundle `npm run build` made (dist/media), served from a loopback server
 * standing in for the webview's resource origin, `acquireVsCodeApi` stubbed (posted messages and the saved state
 * are kept on `window`, and a reload can start from a given state, as VS Code restores a webview).
 */
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join, resolve } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { dashboardHtml } from '../../client/dashboard/html';
import type { HostMessage } from '../../client/dashboard/messages';

export const ROOT = resolve(__dirname, '..', '..');
const MEDIA = join(ROOT, 'dist', 'media');
export const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];
const NONCE = 'Y29udHJvbHMtbm9uY2UtMTIz';

/**
 * VS Code's theme variables (a subset of Default Light+, Dark+ and High Contrast), set the way VS Code sets them:
 * those the charts read and those the @vscode-elements controls are styled with (VS Code derives the `settings-*`
 * ones from the input, dropdown and checkbox colours; High Contrast leaves the list's selection and hover colours
 * unset and draws outlines instead).
 */
export const THEMES = {
  light: {
    cls: 'vscode-light',
    vars: {
      'editor-background': '#ffffff',
      foreground: '#616161',
      descriptionForeground: '#717171',
      'editorWidget-background': '#f3f3f3',
      'editorWidget-border': '#c8c8c8',
      'panel-border': '#80808059',
      'input-background': '#ffffff',
      'input-foreground': '#616161',
      'input-border': '#cecece',
      'dropdown-background': '#ffffff',
      'dropdown-foreground': '#616161',
      'dropdown-border': '#cecece',
      focusBorder: '#0090f1',
      'button-background': '#007acc',
      'button-foreground': '#ffffff',
      'button-secondaryBackground': '#e5e5e5',
      'button-secondaryForeground': '#000000',
      'charts-blue': '#1a85ff',
      'charts-orange': '#d18616',
      'charts-green': '#388a34',
      'charts-purple': '#652d90',
      'charts-red': '#e51400',
      'charts-yellow': '#bf8803',
      'editorHoverWidget-background': '#f3f3f3',
      'editorHoverWidget-border': '#c8c8c8',
      errorForeground: '#a1260d',
      'input-placeholderForeground': '#767676',
      'inputValidation-errorBackground': '#f2dede',
      'inputValidation-errorBorder': '#be1100',
      'settings-textInputBackground': '#ffffff',
      'settings-textInputForeground': '#616161',
      'settings-textInputBorder': '#cecece',
      'settings-dropdownBackground': '#ffffff',
      'settings-dropdownForeground': '#616161',
      'settings-dropdownBorder': '#cecece',
      'settings-dropdownListBorder': '#c8c8c8',
      'settings-checkboxBackground': '#ffffff',
      'settings-checkboxForeground': '#616161',
      'settings-checkboxBorder': '#cecece',
      'settings-headerBorder': '#80808059',
      'panelTitle-activeForeground': '#424242',
      'panelTitle-activeBorder': '#424242',
      'panelTitle-inactiveForeground': '#424242bf',
      'list-activeSelectionBackground': '#0060c0',
      'list-activeSelectionForeground': '#ffffff',
      'list-hoverBackground': '#e8e8e8',
      'list-focusOutline': '#0090f1',
      'button-hoverBackground': '#0062a3',
      'button-secondaryHoverBackground': '#cccccc',
      'widget-shadow': '#00000029',
    },
  },
  dark: {
    cls: 'vscode-dark',
    vars: {
      'editor-background': '#1e1e1e',
      foreground: '#cccccc',
      descriptionForeground: '#ccccccb3',
      'editorWidget-background': '#252526',
      'editorWidget-border': '#454545',
      'panel-border': '#80808059',
      'input-background': '#3c3c3c',
      'input-foreground': '#cccccc',
      'dropdown-background': '#3c3c3c',
      'dropdown-foreground': '#f0f0f0',
      'dropdown-border': '#3c3c3c',
      focusBorder: '#007fd4',
      'button-background': '#0e639c',
      'button-foreground': '#ffffff',
      'button-secondaryBackground': '#3a3d41',
      'button-secondaryForeground': '#ffffff',
      'charts-blue': '#3794ff',
      'charts-orange': '#d18616',
      'charts-green': '#89d185',
      'charts-purple': '#b180d7',
      'charts-red': '#f14c4c',
      'charts-yellow': '#cca700',
      'editorHoverWidget-background': '#252526',
      'editorHoverWidget-border': '#454545',
      errorForeground: '#f48771',
      'input-placeholderForeground': '#a6a6a6',
      'inputValidation-errorBackground': '#5a1d1d',
      'inputValidation-errorBorder': '#be1100',
      'settings-textInputBackground': '#3c3c3c',
      'settings-textInputForeground': '#cccccc',
      'settings-dropdownBackground': '#3c3c3c',
      'settings-dropdownForeground': '#f0f0f0',
      'settings-dropdownBorder': '#3c3c3c',
      'settings-dropdownListBorder': '#454545',
      'settings-checkboxBackground': '#3c3c3c',
      'settings-checkboxForeground': '#f0f0f0',
      'settings-checkboxBorder': '#3c3c3c',
      'settings-headerBorder': '#80808059',
      'panelTitle-activeForeground': '#e7e7e7',
      'panelTitle-activeBorder': '#e7e7e7',
      'panelTitle-inactiveForeground': '#e7e7e799',
      'list-activeSelectionBackground': '#04395e',
      'list-activeSelectionForeground': '#ffffff',
      'list-hoverBackground': '#2a2d2e',
      'list-focusOutline': '#007fd4',
      'button-hoverBackground': '#1177bb',
      'button-secondaryHoverBackground': '#45494e',
      'widget-shadow': '#0000005c',
    },
  },
  'high-contrast': {
    cls: 'vscode-high-contrast',
    vars: {
      'editor-background': '#000000',
      foreground: '#ffffff',
      descriptionForeground: '#ffffff',
      contrastBorder: '#6fc3df',
      'editorWidget-background': '#0c141f',
      'editorWidget-border': '#6fc3df',
      'panel-border': '#6fc3df',
      'input-background': '#000000',
      'input-foreground': '#ffffff',
      'input-border': '#6fc3df',
      'dropdown-background': '#000000',
      'dropdown-foreground': '#ffffff',
      'dropdown-border': '#6fc3df',
      focusBorder: '#f38518',
      'button-background': '#000000',
      'button-foreground': '#ffffff',
      'button-border': '#6fc3df',
      'button-secondaryBackground': '#000000',
      'button-secondaryForeground': '#ffffff',
      'charts-blue': '#3794ff',
      'charts-orange': '#d18616',
      'charts-green': '#89d185',
      'charts-purple': '#b180d7',
      'charts-red': '#f14c4c',
      'charts-yellow': '#ffff00',
      'editorHoverWidget-background': '#0c141f',
      'editorHoverWidget-border': '#6fc3df',
      errorForeground: '#f48771',
      'input-placeholderForeground': '#ffffffb3',
      'inputValidation-errorBackground': '#000000',
      'inputValidation-errorBorder': '#6fc3df',
      'settings-textInputBackground': '#000000',
      'settings-textInputForeground': '#ffffff',
      'settings-textInputBorder': '#6fc3df',
      'settings-dropdownBackground': '#000000',
      'settings-dropdownForeground': '#ffffff',
      'settings-dropdownBorder': '#6fc3df',
      'settings-dropdownListBorder': '#6fc3df',
      'settings-checkboxBackground': '#000000',
      'settings-checkboxForeground': '#ffffff',
      'settings-checkboxBorder': '#6fc3df',
      'settings-headerBorder': '#6fc3df',
      'panelTitle-activeForeground': '#ffffff',
      'panelTitle-activeBorder': '#6fc3df',
      'panelTitle-inactiveForeground': '#ffffff',
      'list-focusOutline': '#f38518',
      'toolbar-hoverOutline': '#f38518',
      contrastActiveBorder: '#f38518',
    },
  },
} as const;
export type ThemeName = keyof typeof THEMES;

/**
 * A loopback server for the page (`/`, from `html()`) and the bundle in `media` (dist/media; the packaging test
 * passes an unpacked VSIX's): the webview's resource origin.
 */
export function serve(html: () => string, media = MEDIA): Promise<Server> {
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    if (url.pathname === '/') {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      return res.end(html());
    }
    if (url.pathname === '/favicon.ico') {
      res.writeHead(204);
      return res.end();
    }
    const name = url.pathname.slice(1);
    if (name !== 'dashboard.js' && name !== 'dashboard.css') {
      res.writeHead(404);
      return res.end();
    }
    res.writeHead(200, { 'content-type': name.endsWith('.js') ? 'text/javascript' : 'text/css' });
    res.end(readFileSync(join(media, name)));
  });
  return new Promise((ok) => server.listen(0, '127.0.0.1', () => ok(server)));
}

/**
 * Waits two animation frames, then for as many more as the cards still to draw need (the webview redraws once a
 * frame, within a time budget, so a loaded machine spreads a big update over several frames).
 */
export async function drawn(page: Page): Promise<void> {
  // No named functions inside: tsx would wrap them in a helper the page does not have.
  await page.evaluate(async () => {
    const g = globalThis as any;
    for (let i = 0; i < 2 || (g.__drawPending?.() ?? 0) > 0; i++)
      await new Promise<void>((ok) => g.requestAnimationFrame(() => ok()));
  });
}

/**
 * Posts a host message to the page and returns once the page has handled it: a listener added after the webview's
 * own runs after it in the same dispatch. A loaded machine may deliver a posted message after two animation frames,
 * and `drawn` would then find nothing pending and return before the message arrived.
 */
export async function postToPage(page: Page, m: unknown): Promise<void> {
  await page.evaluate(
    (msg) =>
      new Promise<void>((ok) => {
        const g = globalThis as any;
        g.addEventListener('message', () => ok(), { once: true });
        g.postMessage(msg, '*');
      }),
    m,
  );
}

/** The dashboard's real HTML and CSP (client/dashboard/html.ts) served on loopback, with the bundle beside it. */
export async function serveDashboard(media = MEDIA): Promise<{ server: Server; origin: string }> {
  let origin = '';
  const server = await serve(
    () =>
      dashboardHtml({
        cspSource: origin,
        nonce: NONCE,
        scriptUri: `${origin}/dashboard.js`,
        styleUri: `${origin}/dashboard.css`,
        title: 'Dashboard: test',
      }),
    media,
  );
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { server, origin };
}

/**
 * Switches the page to a theme as VS Code does: the variables on <html>'s style (the old theme's removed), then the
 * body class; waits for the redraw.
 */
export async function applyTheme(page: Page, name: ThemeName): Promise<void> {
  const t = THEMES[name];
  await page.evaluate(
    ({ cls, vars }) => {
      const doc = (globalThis as any).document;
      const root = doc.documentElement;
      root.removeAttribute('style');
      for (const [k, v] of Object.entries(vars)) root.style.setProperty(`--vscode-${k}`, v);
      root.style.setProperty('--vscode-font-family', 'system-ui, "Ubuntu", "Droid Sans", sans-serif');
      root.style.setProperty('--vscode-font-size', '13px');
      root.style.setProperty('--vscode-font-weight', 'normal');
      root.style.setProperty('--vscode-editor-font-family', '"Droid Sans Mono", monospace');
      doc.body.classList.remove('vscode-light', 'vscode-dark', 'vscode-high-contrast');
      doc.body.classList.add(cls);
    },
    { cls: t.cls, vars: t.vars as Record<string, string> },
  );
  await drawn(page);
}

/** Types `text` into a vscode-textfield as a user does: a click into it, everything selected, the text typed. */
export async function typeInto(page: Page, selector: string, text: string): Promise<void> {
  await page.click(selector);
  await page.keyboard.press('Control+A');
  if (text) await page.keyboard.type(text);
  else await page.keyboard.press('Backspace');
}

/** Picks an option of a vscode-single-select as a user does: a click opens its list, a click on the option. */
export async function choose(page: Page, selector: string, label: string): Promise<void> {
  await page.click(selector);
  await page.locator(`${selector} li[role="option"]`, { hasText: new RegExp(`^\\s*${label}\\s*$`) }).click();
}

/** What a control holds: a vscode-textfield's or vscode-single-select's value, a vscode-checkbox's checked state. */
export async function controlValue(page: Page, selector: string): Promise<string | boolean> {
  return page.$eval(selector, (el: any) => (el.localName === 'vscode-checkbox' ? el.checked : el.value));
}

/** Shows a tab of the dashboard by clicking its header. */
export async function showTab(page: Page, tab: 'charts' | 'rollouts' | 'config'): Promise<void> {
  await page.click(`vscode-tab-header[data-tab="${tab}"]`);
}

/** Collects console errors and warnings, page errors and dialogs (dismissed) into `problems`. */
export function watchProblems(page: Page, problems: string[]): void {
  page.on('console', (m) => {
    if (m.type() === 'error' || m.type() === 'warning') problems.push(`console ${m.type()}: ${m.text()}`);
  });
  page.on('pageerror', (e) => problems.push(`page error: ${e.stack}`));
  page.on('dialog', (d) => {
    problems.push(`dialog: ${d.message()}`);
    void d.dismiss();
  });
}

export interface Drawn {
  label: string;
  run: string;
  raw: boolean;
  x: number[];
  y: (number | null)[];
}

/** Which Chromium to start, and what to do with a new page before it loads (the bench drives its frames). */
export interface BrowserLaunch {
  executablePath?: string;
  args?: string[];
  onPage?: (page: Page) => Promise<void>;
}

export class DashboardPage {
  /** Console errors and warnings, page errors, dialogs. */
  readonly problems: string[] = [];

  private constructor(
    private readonly server: Server,
    private readonly browser: Browser,
    readonly page: Page,
  ) {}

  /**
   * The dashboard in a new Chromium; `media`: where its bundle is (dist/media); `init`: a script run before the
   * page's own, after the stub (the bench's instrumentation); `launch`: another Chromium (the bench's unlocked one).
   */
  static async open(
    viewport = { width: 1200, height: 900 },
    media = MEDIA,
    init?: string,
    launch: BrowserLaunch = {},
  ): Promise<DashboardPage> {
    const { server, origin } = await serveDashboard(media);
    const browser = await chromium.launch({
      executablePath: launch.executablePath ?? '/usr/bin/chromium',
      args: launch.args ?? CHROMIUM_ARGS,
    });
    const page = await browser.newPage({ viewport });
    await launch.onPage?.(page);
    const d = new DashboardPage(server, browser, page);
    watchProblems(page, d.problems);
    // A string, not a function: tsx compiles this file with esbuild's keepNames, whose `__name` the page lacks.
    // The state survives reloads in sessionStorage, as VS Code keeps a webview's state across its reloads.
    await page.addInitScript(`
      window.__posted = [];
      window.__csp = [];
      document.addEventListener('securitypolicyviolation', (e) => window.__csp.push(e.violatedDirective + ' ' + e.blockedURI));
      const kept = sessionStorage.getItem('vscode-state');
      window.__state = kept === null ? undefined : JSON.parse(kept);
      window.acquireVsCodeApi = () => ({
        postMessage: (m) => window.__posted.push(m),
        getState: () => window.__state,
        setState: (s) => { window.__state = s; sessionStorage.setItem('vscode-state', JSON.stringify(s)); },
      });
    `);
    if (init) await page.addInitScript(init);
    await page.goto(`${origin}/`);
    await d.ready();
    return d;
  }

  async ready(): Promise<void> {
    await this.page.waitForFunction(() => (globalThis as any).__posted.some((m: any) => m.type === 'ready'));
  }

  /** Reloads the page (the webview's state kept), and waits for its `ready`. */
  async reload(): Promise<void> {
    await this.page.reload();
    await this.ready();
  }

  async post(m: HostMessage | Record<string, unknown>): Promise<void> {
    await postToPage(this.page, m);
  }

  /** Waits until the webview has drawn everything it was sent (see `drawn`). */
  async frames(): Promise<void> {
    await drawn(this.page);
  }

  async posted(): Promise<any[]> {
    return this.page.evaluate(() => (globalThis as any).__posted);
  }

  async state(): Promise<any> {
    return this.page.evaluate(() => (globalThis as any).__state);
  }

  /** What a tag's chart holds (undecimated points) and its built scales. */
  async chart(tag: string): Promise<{
    datasets: Drawn[];
    x: { min: number; max: number; type: string; title: string };
    y: { min: number; max: number; type: string };
  }> {
    return this.page.evaluate((t) => {
      const c = (globalThis as any).__charts.get(t);
      if (!c) throw new Error(`no chart for ${t}`);
      return {
        datasets: c.data.datasets.map((d: any) => {
          const pts = d.allPoints ?? d.data;
          return { label: d.label, run: d.run, raw: d.raw, x: pts.map((p: any) => p.x), y: pts.map((p: any) => p.y) };
        }),
        x: { min: c.scales.x.min, max: c.scales.x.max, type: c.scales.x.type, title: c.options.scales.x.title.text },
        y: { min: c.scales.y.min, max: c.scales.y.max, type: c.scales.y.type },
      };
    }, tag);
  }

  /** The page coordinates of the data point (x, y) of a tag's chart. */
  async pixelOf(tag: string, x: number, y?: number): Promise<{ x: number; y: number }> {
    return this.page.evaluate(
      ({ t, px, py }) => {
        const c = (globalThis as any).__charts.get(t);
        const r = c.canvas.getBoundingClientRect();
        const yPix = py === undefined ? (c.chartArea.top + c.chartArea.bottom) / 2 : c.scales.y.getPixelForValue(py);
        return { x: r.left + c.scales.x.getPixelForValue(px), y: r.top + yPix };
      },
      { t: tag, px: x, py: y },
    );
  }

  async setTheme(name: ThemeName): Promise<void> {
    await applyTheme(this.page, name);
  }

  async close(): Promise<void> {
    await this.browser.close();
    await new Promise((ok) => this.server.close(ok));
  }
}
