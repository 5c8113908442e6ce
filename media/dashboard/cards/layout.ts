/**
 * The user's layout, kept in the webview state so that a reload restores it: which groups are collapsed, and which
 * cards the user pinned or unpinned (over the default pins of groups.ts). Pure (no DOM).
 */
import { groupOf, isPinned, PINNED_GROUP } from './groups';

export interface LayoutState {
  collapsed: string[];
  /** tag -> pinned (true) or unpinned (false) by the user. */
  pins: Record<string, boolean>;
}

/** A saved layout, or an empty one for anything malformed. */
export function parseLayout(v: unknown): LayoutState {
  const o = typeof v === 'object' && v !== null ? (v as Record<string, unknown>) : {};
  const collapsed = Array.isArray(o.collapsed) ? o.collapsed.filter((g): g is string => typeof g === 'string') : [];
  const pins: Record<string, boolean> = {};
  if (typeof o.pins === 'object' && o.pins !== null && !Array.isArray(o.pins)) {
    for (const [tag, on] of Object.entries(o.pins)) if (typeof on === 'boolean') pins[tag] = on;
  }
  return { collapsed: [...new Set(collapsed)], pins };
}

export class Layout {
  constructor(readonly state: LayoutState) {}

  isPinned(tag: string): boolean {
    return this.state.pins[tag] ?? isPinned(tag);
  }

  /** The group a card is shown in: pinned, or its prefix's. */
  groupFor(tag: string): string {
    return this.isPinned(tag) ? PINNED_GROUP : groupOf(tag) === PINNED_GROUP ? fallbackGroup(tag) : groupOf(tag);
  }

  togglePin(tag: string): boolean {
    const on = !this.isPinned(tag);
    // Back to the default: no override kept.
    if (on === isPinned(tag)) delete this.state.pins[tag];
    else this.state.pins[tag] = on;
    return on;
  }

  isCollapsed(group: string): boolean {
    return this.state.collapsed.includes(group);
  }

  toggleCollapsed(group: string): boolean {
    const i = this.state.collapsed.indexOf(group);
    if (i >= 0) this.state.collapsed.splice(i, 1);
    else this.state.collapsed.push(group);
    return i < 0;
  }
}

/** The prefix group of a tag that is pinned by default (groupOf puts those in the pinned group). */
function fallbackGroup(tag: string): string {
  const i = tag.indexOf('/');
  return i > 0 ? tag.slice(0, i) : 'other';
}
