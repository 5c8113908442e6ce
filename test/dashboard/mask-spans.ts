/** The trained-token spans of the open transcript, read back from the DOM as the mask and text they cover. */
import assert from 'node:assert/strict';
import type { Page } from 'playwright-core';

/** Per token segment (a step-wise step; else one): the mask its spans cover, in order, and their text. */
export async function maskSpansShown(page: Page): Promise<{ mask: number[]; text: string }[]> {
  const spans = await page.$$eval('#transcript-turns .mask-span', (els) =>
    els.map((s: any) => ({
      segment: Number(s.dataset.segment ?? 0),
      from: Number(s.dataset.from),
      to: Number(s.dataset.to),
      trained: s.classList.contains('trained'),
      text: s.textContent as string,
    })),
  );
  const segments: { mask: number[]; text: string }[] = [];
  for (const s of spans) {
    const seg = (segments[s.segment] ??= { mask: [], text: '' });
    assert.equal(s.from, seg.mask.length, `segment ${s.segment}: the spans follow each other`);
    for (let i = s.from; i < s.to; i++) seg.mask.push(s.trained ? 1 : 0);
    seg.text += s.text;
  }
  return segments;
}
