/** TRN319: a written setting about scale that a local run accepts and does not use (scale-settings.ts). */
import type { CheckContext } from '../check-context';
import { SCALE_SETTINGS, scaleSettingText } from '../scale-settings';

export function checkScaleSettings(ctx: CheckContext): void {
  const mode = String(ctx.get('mode') ?? 'both');
  for (const s of SCALE_SETTINGS) {
    if (!ctx.written(s.path)) continue;
    const value = ctx.get(s.path);
    if (!s.applies(value, mode)) continue;
    ctx.report(
      'TRN319',
      `${scaleSettingText(s, value)}: a local run does not use this (${s.why}); the result is the same, only the scale differs. Trinity-RFT uses it as written.`,
      s.path,
      undefined,
      'information',
    );
  }
}
