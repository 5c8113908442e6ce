/**
 * The dashboard webview's HTML: a pure function of where its script and style are and the webview's CSP source,
 * so that the tests load exactly what VS Code shows. Strict CSP: nothing remote, scripts only with the nonce,
 * styles only from the extension (Chart.js sets canvas sizes through the CSSOM, which `style-src` does not govern).
 */
import { randomBytes } from 'node:crypto';

export interface DashboardHtmlParts {
  /** `webview.cspSource`. */
  cspSource: string;
  nonce: string;
  /** `webview.asWebviewUri` of dist/media/dashboard.js and dist/media/dashboard.css. */
  scriptUri: string;
  styleUri: string;
  title: string;
}

export function newNonce(): string {
  return randomBytes(18).toString('base64url');
}

const escape = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

export function dashboardHtml(p: DashboardHtmlParts): string {
  const csp = [
    `default-src 'none'`,
    `script-src 'nonce-${p.nonce}'`,
    `style-src ${p.cspSource}`,
    `img-src ${p.cspSource} data:`,
    `font-src ${p.cspSource}`,
  ].join('; ');
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="${escape(csp)}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="stylesheet" href="${escape(p.styleUri)}">
<title>${escape(p.title)}</title>
</head>
<body>
<header class="toolbar">
  <span id="run-title" class="run-title"></span>
  <span id="run-status" class="run-status"></span>
  <nav class="tabs" role="tablist">
    <button id="tab-charts" role="tab" aria-selected="true" data-tab="charts">Charts</button>
    <button id="tab-rollouts" role="tab" aria-selected="false" data-tab="rollouts">Rollouts</button>
    <button id="tab-config" role="tab" aria-selected="false" data-tab="config">Config</button>
  </nav>
</header>
<div id="compare-bar" class="compare-bar" hidden>
  <input id="run-filter" type="search" placeholder="Filter runs (regex)" aria-label="Filter runs (regex)" aria-describedby="run-filter-error">
  <span id="run-filter-error" class="input-error" role="alert" hidden></span>
  <ul id="run-legend" class="run-legend" aria-label="Runs"></ul>
</div>
<section id="charts" class="pane" role="tabpanel" aria-labelledby="tab-charts">
  <div class="controls">
    <input id="filter" type="search" placeholder="Filter tags (regex)" aria-label="Filter tags">
    <label>Smoothing <input id="smoothing" type="range" min="0" max="0.99" step="0.01" value="0.6"> <output id="smoothing-value">0.60</output></label>
    <label>X axis <select id="x-axis"><option value="step">Step</option><option value="relative">Relative time</option><option value="wall">Wall time</option></select></label>
    <label><input id="log-y" type="checkbox"> Log y</label>
    <label title="Scale y to the 5th–95th percentile of the values in view"><input id="ignore-outliers" type="checkbox"> Ignore outliers</label>
  </div>
  <p id="empty" class="empty">No metrics yet.</p>
  <div id="groups"></div>
</section>
<section id="rollouts" class="pane" role="tabpanel" aria-labelledby="tab-rollouts" hidden>
  <div class="controls">
    <input id="rollouts-search" type="search" placeholder="Search prompts and responses" aria-label="Search prompts and responses">
    <label>Step <select id="rollouts-step-select" aria-label="Step"></select></label>
    <span id="rollouts-source" class="empty"></span>
  </div>
  <p id="rollouts-step" class="empty">No rollouts yet.</p>
  <div id="reward-histogram" class="card histogram" hidden>
    <h3>Reward histogram</h3>
    <div class="chart-box"><canvas id="reward-histogram-canvas" role="img" aria-label="Reward histogram"></canvas></div>
  </div>
  <table id="rollouts-table" hidden>
    <thead><tr><th>Reward</th><th>Prompt</th><th>Response</th></tr></thead>
    <tbody></tbody>
  </table>
</section>
<section id="config" class="pane" role="tabpanel" aria-labelledby="tab-config" hidden>
  <p id="config-empty" class="empty">No config yet.</p>
  <div id="config-diff" hidden>
    <h2 id="config-diff-title">Keys that differ</h2>
    <table id="config-diff-table"><thead></thead><tbody></tbody></table>
  </div>
  <div id="config-runs"></div>
</section>
<script nonce="${escape(p.nonce)}" src="${escape(p.scriptUri)}"></script>
</body>
</html>
`;
}
