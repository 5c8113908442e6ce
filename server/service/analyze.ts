/**
 * A document analysed once per version: loaded, checked (without dataset I/O, which is too slow per keystroke),
 * with the release it was checked against and why.
 */
import type { TextDocument } from 'vscode-languageserver-textdocument';
import type { CheckHost } from '../../runtime/config/check/check-context';
import { loadConfig, releaseComment } from '../../runtime/config/load/load-config';
import { NEWEST_RELEASE, parseRelease, type Release } from '../../runtime/config/releases';
import { checkLoaded, type CheckResult } from '../../runtime/config/check-config';
import type { ServiceSettings } from './settings';
import type { PluginNames } from '../../runtime/config/environment/plugin-names';

export type ReleaseSource = 'comment' | 'setting' | 'python' | 'default';

export interface Analysis {
  uri: string;
  version: number;
  release: Release;
  releaseSource: ReleaseSource;
  /** The check host, with the document's own folder among the base directories. */
  host: CheckHost;
  /** Loaded and checked on first use: completion outside `${` needs only the release, not a full check. */
  readonly result: CheckResult;
}

/** A folder near a config whose own files register plugin names, as the host found it. */
export interface PluginFolder {
  /** Absolute: the quick fix's argument. */
  dir: string;
  /** As its title shows it (relative to the workspace folder where it is inside it). */
  shown: string;
  names: PluginNames;
}

/** Inputs from outside the document: environment, file system, the release of an installed trinity-rft. */
export interface AnalysisContext {
  env: Record<string, string | undefined>;
  host: CheckHost;
  /** The release of the `trinity-rft` package in the configured Python, when one was found. */
  detectedRelease?: Release;
  /** Extra directories a document's relative paths may be relative to (its own folder). */
  baseDirsFor?: (uri: string) => string[];
  /** Reads a file the config names (for migrating `trainer_config_path`). */
  readFile?: (path: string) => string | undefined;
  /** Folders beside a document (its own and those in it) whose files register plugin names (TRN307's quick fix). */
  pluginFoldersNear?: (uri: string) => PluginFolder[];
}

/** The release a document is checked against: its comment, else the setting, else installed Trinity, else the newest. */
function selectRelease(
  text: string,
  settings: ServiceSettings,
  detected?: Release,
): { release: Release; source: ReleaseSource } {
  const comment = releaseComment(text);
  const fromComment = comment && parseRelease(comment.text);
  if (fromComment) return { release: fromComment, source: 'comment' };
  if (settings.trinityVersion !== 'auto') return { release: settings.trinityVersion, source: 'setting' };
  if (detected) return { release: detected, source: 'python' };
  return { release: NEWEST_RELEASE, source: 'default' };
}

/*
 * A class, not an object literal with `get result()`: Node 20's V8 keeps such literals (dictionary-mode objects)
 * alive, with the checked config they reach, through young-generation GCs until the next full GC, as it does objects
 * made by `{ ...x, more }` (see runtime/config/load/structured-merge.ts). Measured: about 200 KB of old-generation garbage per edit, and a major GC
 * every few dozen edits in the language server.
 */
class DocumentAnalysis implements Analysis {
  private checked: CheckResult | undefined;

  constructor(
    readonly uri: string,
    readonly version: number,
    readonly release: Release,
    readonly releaseSource: ReleaseSource,
    readonly host: CheckHost,
    private readonly text: string,
    private readonly env: AnalysisContext['env'],
  ) {}

  get result(): CheckResult {
    return (this.checked ??= checkLoaded(loadConfig(this.text, { release: this.release, env: this.env }), this.host));
  }
}

export class AnalysisCache {
  private readonly entries = new Map<string, Analysis>();

  constructor(private readonly maxEntries = 200) {}

  get(doc: TextDocument, settings: ServiceSettings, ctx: AnalysisContext): Analysis {
    const hit = this.entries.get(doc.uri);
    if (hit && hit.version === doc.version) return hit;
    const text = doc.getText();
    const { release, source } = selectRelease(text, settings, ctx.detectedRelease);
    // Object.assign, not `{ ...ctx.host, baseDirs }`: see DocumentAnalysis (this runs once per edit too).
    const host = Object.assign(
      {},
      ctx.host,
      { gpu: settings.gpu },
      ctx.baseDirsFor ? { baseDirs: [...ctx.baseDirsFor(doc.uri), ...(ctx.host.baseDirs ?? [])] } : {},
    );
    const analysis = new DocumentAnalysis(doc.uri, doc.version, release, source, host, text, ctx.env);
    this.entries.delete(doc.uri);
    this.entries.set(doc.uri, analysis);
    if (this.entries.size > this.maxEntries) this.entries.delete(this.entries.keys().next().value as string);
    return analysis;
  }

  /** Forget everything (settings or environment changed). */
  clear(): void {
    this.entries.clear();
  }

  delete(uri: string): void {
    this.entries.delete(uri);
  }
}
