/// <reference lib="dom" />
/**
 * The charts' colours, read from VS Code's `--vscode-*` variables (nothing hard-coded), and re-read when the theme
 * changes: VS Code swaps the body class (`vscode-light`, `vscode-dark`, `vscode-high-contrast`) and the variables
 * on the root element's style.
 */

export interface Theme {
  foreground: string;
  muted: string;
  /** Grid lines: the foreground, faint (a border colour is too loud in high contrast). */
  grid: string;
  /** The axis lines. */
  border: string;
  tooltipBackground: string;
  tooltipBorder: string;
  /** A card's background (dashboard.css's `.card`): the halo behind the marks' labels. */
  cardBackground: string;
  fontFamily: string;
  /** One colour per run. */
  series: string[];
}

const SERIES_VARS = [
  '--vscode-charts-blue',
  '--vscode-charts-orange',
  '--vscode-charts-green',
  '--vscode-charts-purple',
  '--vscode-charts-red',
  '--vscode-charts-yellow',
];

export function readTheme(): Theme {
  const css = getComputedStyle(document.body);
  const v = (name: string, ...fallbacks: string[]): string => {
    for (const n of [name, ...fallbacks]) {
      const value = css.getPropertyValue(n).trim();
      if (value) return value;
    }
    return '';
  };
  const foreground = v('--vscode-foreground', '--vscode-editor-foreground');
  return {
    foreground,
    muted: v('--vscode-descriptionForeground', '--vscode-foreground'),
    grid: withAlpha(foreground, 0.15),
    border:
      v('--vscode-editorWidget-border', '--vscode-panel-border', '--vscode-contrastBorder') ||
      withAlpha(foreground, 0.4),
    tooltipBackground: v(
      '--vscode-editorHoverWidget-background',
      '--vscode-editorWidget-background',
      '--vscode-editor-background',
    ),
    tooltipBorder: v('--vscode-editorHoverWidget-border', '--vscode-contrastBorder', '--vscode-editorWidget-border'),
    cardBackground: v('--vscode-editorWidget-background', '--vscode-editor-background'),
    fontFamily: v('--vscode-font-family') || 'sans-serif',
    series: SERIES_VARS.map((n) => v(n, '--vscode-foreground')),
  };
}

/** `color` at opacity `alpha` (hex and rgb() forms, as VS Code writes its variables); other forms unchanged. */
export function withAlpha(color: string, alpha: number): string {
  const c = color.trim();
  let m = /^#([0-9a-f]{3,4})$/i.exec(c);
  if (m) return withAlpha(`#${[...m[1]].map((d) => d + d).join('')}`, alpha);
  m = /^#([0-9a-f]{6})([0-9a-f]{2})?$/i.exec(c);
  if (m) {
    const n = parseInt(m[1], 16);
    const a = m[2] ? parseInt(m[2], 16) / 255 : 1;
    return `rgba(${(n >> 16) & 255}, ${(n >> 8) & 255}, ${n & 255}, ${round(a * alpha)})`;
  }
  m = /^rgba?\(\s*([\d.]+)[\s,]+([\d.]+)[\s,]+([\d.]+)(?:[\s,/]+([\d.]+%?))?\s*\)$/i.exec(c);
  if (m) {
    const a = m[4] === undefined ? 1 : m[4].endsWith('%') ? parseFloat(m[4]) / 100 : parseFloat(m[4]);
    return `rgba(${m[1]}, ${m[2]}, ${m[3]}, ${round(a * alpha)})`;
  }
  return c;
}

const round = (x: number) => Math.round(x * 1000) / 1000;

/** Calls `changed` when the theme changes. */
export function onThemeChange(changed: () => void): void {
  const observer = new MutationObserver(() => changed());
  observer.observe(document.body, { attributes: true, attributeFilter: ['class'] });
  observer.observe(document.documentElement, { attributes: true, attributeFilter: ['style', 'class'] });
}
