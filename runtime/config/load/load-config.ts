/**
 * Loads a Trinity config the way `trinity run` does up to (not including) its check step: YAML with ranges ->
 * structured merge over the release's schema -> OmegaConf interpolation. The result keeps a map from every value
 * to the source range that set it.
 */
import { CODES, type ConfigDiagnostic, type DiagnosticCode, type Path } from '../diagnostics';
import { resolveInterpolations, toPlain } from './interpolate-config';
import { mergeConfig, type CMap, type CNode } from './structured-merge';
import { ROOT_SECTION } from '../model';
import { NEWEST_RELEASE, parseRelease, type Release } from '../releases';
import { parseSource, positionAt, type ParsedSource, type Range } from './yaml-tree';

export interface LoadOptions {
  /** A release, or 'auto' (the `# trinity-version:` comment, else the newest). */
  release?: Release | 'auto';
  /** Environment for `${oc.env:...}`. Defaults to none: pass `process.env` explicitly. */
  env?: Record<string, string | undefined>;
}

export interface LoadedConfig {
  text: string;
  release: Release;
  /** How the release was chosen. */
  releaseFrom: 'option' | 'comment' | 'default';
  source: ParsedSource;
  /** The merged, typed tree; values resolved. */
  root: CMap;
  /** The same as plain data (what Trinity's dataclasses hold after loading, before its checks). */
  value: Record<string, unknown>;
  diagnostics: ConfigDiagnostic[];
}

const VERSION_COMMENT = /^[ \t]*#[ \t]*trinity-version:[ \t]*([^\s#]+)/m;

export function releaseComment(text: string): { text: string; range: Range } | undefined {
  const m = VERSION_COMMENT.exec(text);
  if (!m) return undefined;
  const start = m.index + m[0].length - m[1].length;
  return { text: m[1], range: [start, start + m[1].length] };
}

export function loadConfig(text: string, opts: LoadOptions = {}): LoadedConfig {
  const diagnostics: ConfigDiagnostic[] = [];
  let release: Release = NEWEST_RELEASE;
  let releaseFrom: LoadedConfig['releaseFrom'] = 'default';
  const comment = releaseComment(text);
  if (opts.release && opts.release !== 'auto') {
    release = opts.release;
    releaseFrom = 'option';
  } else if (comment) {
    const r = parseRelease(comment.text);
    if (r) {
      release = r;
      releaseFrom = 'comment';
    } else {
      diagnostics.push(
        diag(
          'TRN030',
          `Unknown Trinity release \`${comment.text}\` in the \`# trinity-version:\` comment; checking against ${NEWEST_RELEASE}.`,
          comment.range,
        ),
      );
    }
  }

  const source = parseSource(text);
  for (const p of source.problems) {
    const code: DiagnosticCode =
      p.kind === 'duplicate-key'
        ? 'TRN002'
        : p.kind === 'alias-budget'
          ? 'TRN003'
          : p.kind === 'not-a-mapping'
            ? 'TRN004'
            : p.kind === 'complex-key'
              ? 'TRN005'
              : 'TRN001';
    diagnostics.push(diag(code, p.message, p.range));
  }
  const merged = mergeConfig(source.root, ROOT_SECTION, release);
  diagnostics.push(...merged.diagnostics);
  diagnostics.push(...resolveInterpolations(merged.root, opts.env ?? {}, release));
  return {
    text,
    release,
    releaseFrom,
    source,
    root: merged.root,
    value: toPlain(merged.root, release) as Record<string, unknown>,
    diagnostics,
  };
}

function diag(code: DiagnosticCode, message: string, range: Range): ConfigDiagnostic {
  return { code, severity: CODES[code].severity, message, range };
}

/** The node at a path, if the merged tree has one. */
export function nodeAt(root: CNode, path: Path): CNode | undefined {
  let n: CNode | undefined = root;
  for (const k of path) {
    if (!n) return undefined;
    if (n.kind === 'map') n = n.entries.get(String(k));
    else if (n.kind === 'list') n = n.items[Number(k)];
    else return undefined;
  }
  return n;
}

/**
 * The best source range for a path: the written key (or list item) itself, else the nearest written ancestor's key,
 * else the start of the file.
 */
export function rangeForPath(root: CNode, path: Path, prefer: 'key' | 'value' = 'key'): Range {
  for (let len = path.length; len >= 0; len--) {
    const n = nodeAt(root, path.slice(0, len));
    if (n && n.origin === 'yaml') {
      if (prefer === 'value' || len < path.length) {
        if (len === path.length && n.range) return n.range;
      }
      if (n.keyRange) return n.keyRange;
      if (n.range && len > 0) return n.range;
    }
  }
  return [0, 0];
}

export function lineColumn(source: ParsedSource, offset: number): { line: number; column: number } {
  const p = positionAt(source.lineStarts, offset);
  return { line: p.line + 1, column: p.character + 1 };
}
