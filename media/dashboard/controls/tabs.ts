/// <reference lib="dom" />
/**
 * The Charts / Rollouts / Config tabs: a vscode-tabs element whose headers and panels carry `data-tab`. Tracks the
 * tab shown by name (vscode-tabs knows only indices, and numbers its headers' and panels' ids itself), and takes a
 * tab out of the strip where a panel has none (a compare panel's Rollouts), so that arrow keys skip it.
 */
import type { VscodeTabHeader, VscodeTabs } from './elements';

export class Tabs {
  private readonly element: VscodeTabs;
  /** Every tab's header and panel, in their order, including those taken out. */
  private readonly all: { name: string; header: VscodeTabHeader; panel: HTMLElement }[];
  private shown: string;

  constructor(changed: (tab: string) => void) {
    this.element = document.getElementById('tabs') as VscodeTabs;
    this.all = [...this.element.querySelectorAll<VscodeTabHeader>('vscode-tab-header[data-tab]')].map((header) => ({
      name: header.dataset.tab!,
      header,
      panel: this.element.querySelector<HTMLElement>(`vscode-tab-panel[data-tab="${header.dataset.tab}"]`)!,
    }));
    this.shown = this.all[0].name;
    this.element.addEventListener('vsc-tabs-select', (e) => {
      this.shown = this.present()[e.detail.selectedIndex]?.name ?? this.shown;
      changed(this.shown);
    });
    // vscode-tabs selects the focused tab on Enter; Space does the same, as on a native button.
    this.element.addEventListener('keydown', (e) => {
      const header = e.target instanceof Element ? e.target.closest('vscode-tab-header') : null;
      if (e.key === ' ' && header) {
        e.preventDefault();
        (header as HTMLElement).click();
      }
    });
  }

  get current(): string {
    return this.shown;
  }

  has(name: string): boolean {
    return this.present().some((t) => t.name === name);
  }

  show(name: string): void {
    const i = this.present().findIndex((t) => t.name === name);
    if (i < 0) return;
    this.shown = name;
    this.element.selectedIndex = i;
  }

  /** Puts a tab in the strip or takes it out; taking out the one shown shows the first. */
  setAvailable(name: string, available: boolean): void {
    const tab = this.all.find((t) => t.name === name);
    if (!tab || tab.header.isConnected === available) return;
    if (available) {
      const next = this.all.slice(this.all.indexOf(tab) + 1).find((t) => t.header.isConnected);
      this.element.insertBefore(tab.header, next?.header ?? null);
      this.element.insertBefore(tab.panel, next?.panel ?? null);
    } else {
      tab.header.remove();
      tab.panel.remove();
    }
    this.show(this.has(this.shown) ? this.shown : this.present()[0].name);
  }

  private present(): typeof this.all {
    return this.all.filter((t) => t.header.isConnected);
  }
}
