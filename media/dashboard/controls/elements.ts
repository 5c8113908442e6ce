/**
 * The @vscode-elements controls the dashboard uses, each from its own entry point so that the bundle carries only
 * these (and Lit) rather than the whole library. Importing a module defines its custom element.
 */
import '@vscode-elements/elements/dist/vscode-button/index.js';
import '@vscode-elements/elements/dist/vscode-checkbox/index.js';
import '@vscode-elements/elements/dist/vscode-option/index.js';
import '@vscode-elements/elements/dist/vscode-single-select/index.js';
import '@vscode-elements/elements/dist/vscode-tab-header/index.js';
import '@vscode-elements/elements/dist/vscode-tab-panel/index.js';
import '@vscode-elements/elements/dist/vscode-tabs/index.js';
import '@vscode-elements/elements/dist/vscode-textfield/index.js';

export type { VscodeButton } from '@vscode-elements/elements/dist/vscode-button/vscode-button.js';
export type { VscodeCheckbox } from '@vscode-elements/elements/dist/vscode-checkbox/vscode-checkbox.js';
export type { VscodeSingleSelect } from '@vscode-elements/elements/dist/vscode-single-select/vscode-single-select.js';
export type { VscodeTabHeader } from '@vscode-elements/elements/dist/vscode-tab-header/vscode-tab-header.js';
export type { VscodeTabs } from '@vscode-elements/elements/dist/vscode-tabs/vscode-tabs.js';
export type { VscodeTextfield } from '@vscode-elements/elements/dist/vscode-textfield/vscode-textfield.js';

/** A button of a card's header (pin, export, reset zoom): a small secondary vscode-button. */
export function cardButton(text: string, className: string, title: string, click: () => void): HTMLElement {
  const b = document.createElement('vscode-button');
  b.secondary = true;
  b.className = `card-action ${className}`;
  b.textContent = text;
  b.title = title;
  b.addEventListener('click', click);
  return b;
}
