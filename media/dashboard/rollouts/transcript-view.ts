/// <reference lib="dom" />
/**
 * The Rollouts tab for agents: a step's episodes as GRPO groups side by side (each run's outcome, reward, advantage,
 * turns, env steps, invalid actions), filtered by outcome and by the search box, and the chosen episode as a
 * transcript (one message per turn with its step, reward and validity) or as its tokens, the trained ones (action
 * mask 1) marked against the template's and the environment's, token boundaries on request. Long episodes are
 * virtualised (transcript-lazy-list.ts). Model and environment text is only ever `textContent`.
 */
import type { RolloutSampleMessage } from '../../../client/dashboard/messages';
import type { VscodeCheckbox, VscodeSingleSelect } from '../controls/elements';
import {
  episodeMatches,
  episodesOf,
  FILTER_LABELS,
  maskSpans,
  OUTCOME_LABELS,
  passesFilter,
  turnMatches,
  type Episode,
  type EpisodeFilter,
  type TokenSegment,
  type Turn,
} from './transcript-episodes';
import { LazyList, type LazyItem } from './transcript-lazy-list';

/**
 * Tokens per block of the token view (a block is one lazily built item): a block ends at the first line end after
 * this many tokens, so that no line is split, or at four times as many tokens when no line ends.
 */
const TOKENS_PER_BLOCK = 120;

const num = (x: number) => String(Number(x.toFixed(4)));
const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;

function el<K extends keyof HTMLElementTagNameMap>(tag: K, cls: string, text?: string): HTMLElementTagNameMap[K] {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined) e.textContent = text;
  return e;
}

export class TranscriptView {
  private episodes: Episode[] = [];
  private filter: EpisodeFilter = 'all';
  private query = '';
  /** The episode open in the transcript (its key), kept across new data while it still exists. */
  private openKey: string | undefined;
  private readonly list: LazyList;
  private readonly root = document.getElementById('episodes')!;
  private readonly tokensBox = document.getElementById('episode-tokens') as VscodeCheckbox;
  private readonly boundariesBox = document.getElementById('episode-boundaries') as VscodeCheckbox;

  constructor() {
    this.list = new LazyList(
      document.getElementById('transcript-scroll')!,
      document.getElementById('transcript-turns')!,
    );
    const select = document.getElementById('episode-filter') as VscodeSingleSelect;
    select.options = (Object.keys(FILTER_LABELS) as EpisodeFilter[]).map((f) => ({
      label: FILTER_LABELS[f],
      value: f,
      description: '',
      selected: f === 'all',
      disabled: false,
    }));
    select.value = 'all';
    select.addEventListener('change', () => {
      this.filter = select.value as EpisodeFilter;
      this.renderGroups();
    });
    this.tokensBox.addEventListener('change', () => this.renderTranscript());
    this.boundariesBox.addEventListener('change', () => this.renderTranscript());
  }

  /** Whether any of the samples is a multi-turn episode (then this view replaces the sample table). */
  static wants(samples: readonly RolloutSampleMessage[]): boolean {
    return samples.some((s) => s.episode);
  }

  /** Shows a step's samples (the search query applies across every turn). */
  show(samples: readonly RolloutSampleMessage[], query: string): void {
    this.episodes = episodesOf(samples);
    this.query = query;
    this.root.hidden = false;
    if (!this.episodes.some((e) => e.key === this.openKey)) this.openKey = undefined;
    this.renderGroups();
    this.renderTranscript();
  }

  hide(): void {
    this.root.hidden = true;
    this.list.clear();
  }

  /** Builds every turn or token block of the open transcript (the tests read an episode back whole). */
  fillAll(): void {
    this.list.fillAll();
  }

  private shown(): Episode[] {
    return this.episodes.filter((e) => passesFilter(e, this.filter) && episodeMatches(e, this.query));
  }

  private renderGroups(): void {
    const shown = new Set(this.shown());
    const groups = new Map<string, Episode[]>();
    for (const e of this.episodes) groups.set(e.group, [...(groups.get(e.group) ?? []), e]);
    const box = document.getElementById('episode-groups')!;
    const caption = document.getElementById('episodes-caption')!;
    caption.textContent =
      shown.size === this.episodes.length
        ? `${plural(this.episodes.length, 'episode')} in ${plural(groups.size, 'group')}`
        : `${shown.size} of ${plural(this.episodes.length, 'episode')} shown`;
    box.replaceChildren(
      ...[...groups]
        .filter(([, eps]) => eps.some((e) => shown.has(e)))
        .map(([group, eps]) => this.groupCard(group, eps, shown)),
    );
  }

  private groupCard(group: string, eps: Episode[], shown: Set<Episode>): HTMLElement {
    const card = el('div', 'episode-group');
    card.dataset.group = group;
    const rewards = eps.map((e) => e.reward).filter((r): r is number => r !== null);
    const mean = rewards.length ? rewards.reduce((a, b) => a + b, 0) / rewards.length : NaN;
    card.append(
      el(
        'h3',
        '',
        `Task ${group}: ${plural(eps.length, 'run')}${Number.isNaN(mean) ? '' : `, mean reward ${num(mean)}`}`,
      ),
    );
    const row = el('div', 'episode-row');
    for (const e of [...eps].sort((a, b) => a.run - b.run)) if (shown.has(e)) row.append(this.episodeCard(e));
    card.append(row);
    return card;
  }

  private episodeCard(e: Episode): HTMLElement {
    const b = el('button', `episode-card outcome-${e.outcome}${e.key === this.openKey ? ' open' : ''}`);
    b.type = 'button';
    b.dataset.key = e.key;
    b.setAttribute('aria-pressed', String(e.key === this.openKey));
    b.append(el('span', 'episode-run', `Run ${e.run}${e.stepWise ? ' (step-wise)' : ''}`));
    b.append(el('span', 'episode-outcome', OUTCOME_LABELS[e.outcome]));
    const facts: [string, string, string][] = [['reward', 'Reward', e.reward === null ? 'n/a' : num(e.reward)]];
    // An evaluation's episodes have no advantage: the line is left out where none of the shown episodes has one.
    if (this.episodes.some((x) => x.advantage !== undefined))
      facts.push(['advantage', 'Advantage', e.advantage === undefined ? 'n/a' : num(e.advantage)]);
    facts.push(['turns', 'Model turns', String(e.modelTurns)]);
    if (e.envSteps !== undefined) facts.push(['env-steps', 'Env steps', String(e.envSteps)]);
    facts.push(['invalid', 'Invalid actions', String(e.invalidActions)]);
    const dl = el('dl', 'episode-facts');
    for (const [cls, label, value] of facts) {
      const dt = el('dt', '', label);
      const dd = el('dd', cls, value);
      if (cls === 'advantage' && e.advantage !== undefined)
        dd.classList.add(e.advantage > 0 ? 'up' : e.advantage < 0 ? 'down' : 'flat');
      dl.append(dt, dd);
    }
    b.append(dl);
    b.addEventListener('click', () => {
      this.openKey = e.key;
      this.renderGroups();
      this.renderTranscript();
    });
    return b;
  }

  private renderTranscript(): void {
    const box = document.getElementById('transcript')!;
    const e = this.episodes.find((x) => x.key === this.openKey);
    box.hidden = e === undefined;
    if (!e) {
      this.list.clear();
      return;
    }
    document.getElementById('transcript-title')!.textContent =
      `Task ${e.group}, run ${e.run}: ${OUTCOME_LABELS[e.outcome]}`;
    const summary = [
      `reward ${e.reward === null ? 'n/a' : num(e.reward)}`,
      ...(e.advantage !== undefined ? [`advantage ${num(e.advantage)}`] : []),
      plural(e.modelTurns, 'model turn'),
      ...(e.envSteps !== undefined ? [`env_steps ${e.envSteps}`] : []),
      plural(e.invalidActions, 'invalid action'),
    ];
    document.getElementById('transcript-summary')!.textContent = summary.join(' · ');
    const tokens = this.tokensBox.checked;
    const note = document.getElementById('transcript-note')!;
    note.textContent =
      tokens && e.tokens.length === 0
        ? 'This record has no action mask: the trained tokens are not known.'
        : tokens && e.tokens.some((s) => !s.texts)
          ? 'Token texts were not recorded: tokens are shown by id.'
          : '';
    const list = tokens ? this.tokenItems(e.tokens) : e.turns.map((t) => this.turnItem(t));
    document.getElementById('transcript-turns')!.className = tokens
      ? `token-view${this.boundariesBox.checked ? ' boundaries' : ''}`
      : 'turn-view';
    this.list.show(list);
  }

  private turnItem(t: Turn): LazyItem {
    const lines = t.content.split('\n').length + Math.ceil(t.content.length / 100);
    return {
      estimate: 36 + lines * 18,
      build: () => {
        const m = el(
          'div',
          `turn role-${t.role}${t.invalid ? ' invalid' : ''}${turnMatches(t, this.query) ? ' match' : ''}`,
        );
        m.dataset.role = t.role;
        const head = el('div', 'turn-head');
        head.append(el('span', 'turn-role', roleLabel(t.role)));
        if (t.step !== undefined) head.append(el('span', 'turn-step', `step ${t.step}`));
        if (t.action !== undefined) head.append(el('span', 'turn-action', `turn ${t.action + 1}`));
        if (t.reward !== undefined) head.append(el('span', 'turn-reward', `reward ${num(t.reward)}`));
        if (t.invalid) head.append(el('span', 'turn-invalid', 'invalid action'));
        m.append(head, el('div', 'turn-text', t.content));
        return m;
      },
    };
  }

  private tokenItems(segments: readonly TokenSegment[]): LazyItem[] {
    const items: LazyItem[] = [];
    for (const [si, seg] of segments.entries()) {
      if (seg.step !== undefined)
        items.push({ estimate: 24, build: () => el('div', 'token-step', `Step ${seg.step}`) });
      for (const [from, to] of tokenBlocks(seg)) {
        items.push({ estimate: ((to - from) / 12) * 20, build: () => this.tokenBlock(si, seg, from, to) });
      }
    }
    return items;
  }

  /** Tokens [from, to) of a segment: one span per run of equal mask, one child per token with boundaries shown. */
  private tokenBlock(segment: number, seg: TokenSegment, from: number, to: number): HTMLElement {
    const block = el('div', 'token-block');
    const boundaries = this.boundariesBox.checked;
    const text = (i: number) => (seg.texts ? seg.texts[i] : `#${seg.ids[i]} `);
    for (const s of maskSpans(seg.mask.slice(from, to))) {
      const span = el('span', s.trained ? 'mask-span trained' : 'mask-span context');
      span.dataset.segment = String(segment);
      span.dataset.from = String(from + s.from);
      span.dataset.to = String(from + s.to);
      span.title = s.trained ? 'trained (action mask 1)' : 'not trained: template or environment (action mask 0)';
      if (boundaries) {
        for (let i = from + s.from; i < from + s.to; i++) span.append(el('span', 'tok', text(i)));
      } else {
        let t = '';
        for (let i = from + s.from; i < from + s.to; i++) t += text(i);
        span.textContent = t;
      }
      block.append(span);
    }
    // A token's index and id on hover, found when asked rather than kept on each of thousands of elements.
    if (boundaries)
      block.addEventListener('mouseover', (ev) => {
        const tok = ev.target as HTMLElement;
        const span = tok.parentElement;
        if (!tok.classList.contains('tok') || !span || tok.title) return;
        const i = Number(span.dataset.from) + [...span.children].indexOf(tok);
        tok.title = `token ${i}: id ${seg.ids[i]}`;
      });
    return block;
  }
}

/** [from, to) of each block of a segment's tokens. */
function tokenBlocks(seg: TokenSegment): [number, number][] {
  const blocks: [number, number][] = [];
  let from = 0;
  for (let i = 0; i < seg.ids.length; i++) {
    const n = i + 1 - from;
    const lineEnd = seg.texts !== undefined && seg.texts[i].endsWith('\n');
    if ((n >= TOKENS_PER_BLOCK && lineEnd) || n >= 4 * TOKENS_PER_BLOCK) {
      blocks.push([from, i + 1]);
      from = i + 1;
    }
  }
  if (from < seg.ids.length) blocks.push([from, seg.ids.length]);
  return blocks;
}

function roleLabel(role: Turn['role']): string {
  return role === 'user' ? 'user / environment' : role;
}
