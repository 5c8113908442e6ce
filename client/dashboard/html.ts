/**
 * The dashboard webview's HTML: a pure function of where its script and style are and the webview's CSP source,
 * so that the tests load exactly what VS Code shows. Strict CSP: nothing remote, scripts only with the nonce,
 * styles only from the extension (Chart.js sets canvas sizes through the CSSOM, and the @vscode-elements controls style
 * their shadow roots with constructable stylesheets, neither of which `style-src` governs). The controls are custom
 * elements the bundle defines (media/dashboard/controls/elements.ts); their labels are set here, their state by main.ts.
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
<div id="compare-bar" class="compare-bar" hidden>
  <vscode-textfield id="run-filter" type="search" placeholder="Filter runs (regex)" aria-describedby="run-filter-error"></vscode-textfield>
  <span id="run-filter-error" class="input-error" role="alert" hidden></span>
  <ul id="run-legend" class="run-legend" aria-label="Runs"></ul>
</div>
<vscode-tabs id="tabs">
  <div slot="addons" class="run-heading">
    <span id="run-title" class="run-title"></span>
    <span id="run-status" class="run-status"></span>
  </div>
  <vscode-tab-header slot="header" data-tab="charts">Charts</vscode-tab-header>
  <vscode-tab-panel data-tab="charts">
<section id="charts" class="pane">
  <div class="controls">
    <vscode-textfield id="filter" type="search" placeholder="Filter tags (regex)"></vscode-textfield>
    <label class="slider">Smoothing <input id="smoothing" type="range" min="0" max="0.99" step="0.01" value="0.6"> <output id="smoothing-value" for="smoothing">0.60</output></label>
    <span class="labelled">X axis
      <vscode-single-select id="x-axis" label="X axis">
        <vscode-option value="step">Step</vscode-option>
        <vscode-option value="relative">Relative time</vscode-option>
        <vscode-option value="wall">Wall time</vscode-option>
      </vscode-single-select></span>
    <vscode-checkbox id="log-y" label="Log y"></vscode-checkbox>
    <vscode-checkbox id="ignore-outliers" label="Ignore outliers" title="Scale y to the 5th–95th percentile of the values in view"></vscode-checkbox>
  </div>
  <p id="empty" class="empty">No metrics yet.</p>
  <div id="groups"></div>
</section>
  </vscode-tab-panel>
  <vscode-tab-header slot="header" data-tab="rollouts">Rollouts</vscode-tab-header>
  <vscode-tab-panel data-tab="rollouts">
<section id="rollouts" class="pane">
  <div class="controls">
    <vscode-textfield id="rollouts-search" type="search" placeholder="Search prompts and responses"></vscode-textfield>
    <span class="labelled">Step <vscode-single-select id="rollouts-step-select" label="Step"></vscode-single-select></span>
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
  <div id="episodes" hidden>
    <div class="controls">
      <span class="labelled">Show <vscode-single-select id="episode-filter" label="Show"></vscode-single-select></span>
      <span id="episodes-caption"></span>
    </div>
    <div id="episode-groups"></div>
    <div id="transcript" class="card" hidden>
      <h3 id="transcript-title"></h3>
      <p id="transcript-summary"></p>
      <div class="controls">
        <vscode-checkbox id="episode-tokens" label="Trained tokens" title="Show the tokens after the prompt, those under action_mask (trained) marked"></vscode-checkbox>
        <vscode-checkbox id="episode-boundaries" label="Token boundaries" title="Outline each token"></vscode-checkbox>
        <span id="transcript-note" class="empty"></span>
      </div>
      <div id="transcript-scroll"><div id="transcript-turns"></div></div>
    </div>
  </div>
</section>
  </vscode-tab-panel>
  <vscode-tab-header slot="header" data-tab="config">Config</vscode-tab-header>
  <vscode-tab-panel data-tab="config">
<section id="config" class="pane">
  <p id="config-empty" class="empty">No config yet.</p>
  <div id="config-diff" hidden>
    <h2 id="config-diff-title">Keys that differ</h2>
    <table id="config-diff-table"><thead></thead><tbody></tbody></table>
  </div>
  <div id="config-runs"></div>
</section>
  </vscode-tab-panel>
</vscode-tabs>
<script nonce="${escape(p.nonce)}" src="${escape(p.scriptUri)}"></script>
</body>
</html>
`;
}
