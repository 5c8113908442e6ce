/// <reference lib="dom" />
/**
 * A virtualised list for long transcripts: every item is a placeholder of its estimated (later: measured) height,
 * and only the items near the scroll container's viewport hold their content. An item is built when it comes within
 * a viewport's height of the visible part and emptied again (its height kept) when it leaves that band, so a
 * 100-turn, 20k-token episode keeps a few screens of DOM whatever its length.
 */

export interface LazyItem {
  /** A height to reserve before the item is built (px). */
  estimate: number;
  build: () => HTMLElement;
}

export class LazyList {
  private readonly observer: IntersectionObserver;
  private readonly slots: HTMLElement[] = [];
  private readonly items = new WeakMap<HTMLElement, LazyItem>();

  constructor(
    private readonly scroller: HTMLElement,
    private readonly host: HTMLElement,
  ) {
    this.observer = new IntersectionObserver((entries) => this.onIntersect(entries), {
      root: scroller,
      rootMargin: '100% 0px',
    });
  }

  /** Replaces the items; the first screens are built at once (no blank frame), the rest as they near the view. */
  show(items: readonly LazyItem[]): void {
    this.clear();
    let budget = this.scroller.clientHeight * 2 || 2000;
    for (const [i, item] of items.entries()) {
      const slot = document.createElement('div');
      slot.className = 'lazy-slot';
      slot.dataset.index = String(i);
      slot.style.minHeight = `${item.estimate}px`;
      this.items.set(slot, item);
      this.host.append(slot);
      this.slots.push(slot);
      if (budget > 0) {
        this.fill(slot);
        budget -= item.estimate;
      }
      this.observer.observe(slot);
    }
  }

  clear(): void {
    this.observer.disconnect();
    this.slots.length = 0;
    this.host.replaceChildren();
  }

  /** Builds every item and keeps them built until the next `show` (a test reads a whole episode back). */
  fillAll(): void {
    this.observer.disconnect();
    for (const s of this.slots) this.fill(s);
  }

  private onIntersect(entries: IntersectionObserverEntry[]): void {
    // Heights first (the entries carry them, no layout forced), then the DOM changes.
    for (const e of entries) {
      const slot = e.target as HTMLElement;
      if (!e.isIntersecting && slot.firstChild) this.empty(slot, e.boundingClientRect.height);
    }
    for (const e of entries) if (e.isIntersecting) this.fill(e.target as HTMLElement);
  }

  private fill(slot: HTMLElement): void {
    if (slot.firstChild) return;
    slot.append(this.items.get(slot)!.build());
    slot.style.minHeight = '';
  }

  /** Empties a slot, keeping its measured height so that the scroll position does not jump. */
  private empty(slot: HTMLElement, height: number): void {
    slot.style.minHeight = `${height}px`;
    slot.replaceChildren();
  }
}
