/**
 * A dataset directory's split, resolved to its data files as `datasets` resolves them (README.md `configs:`, else
 * the default split patterns, else plainly named files with a warning), then peeked.
 */
import * as nodePath from 'node:path';
import { fileHasModule, inferModule, isAllowedDataFile, type BuilderModule } from './data-file-formats';
import { listFiles, MAX_LISTED_DIRS, MAX_LISTED_FILES } from './dir-listing';
import { normalizeRel } from './fsspec-glob';
import { defaultSplitMap, lenientSplitFiles, resolvePatternDict, type SplitMap } from './hf-splits';
import { peekFiles } from './peek-files';
import { peekFailure, type PeekFailure, type PeekLimits, type PeekResult, type PeekWarning } from './peek-result';
import { chooseConfig, readReadmeConfigs } from './readme-configs';
import { peekSavedToDisk } from './saved-to-disk';

export async function peekDirectory(
  dir: string,
  splits: string[],
  subset: string | null,
  limits: PeekLimits,
): Promise<PeekResult> {
  const saved = await peekSavedToDisk(dir, splits);
  if (saved) return saved;

  const warnings: PeekWarning[] = [];
  const listing = await listFiles(dir);
  if (listing.truncated) {
    warnings.push({
      code: 'listing-truncated',
      message:
        `${dir} holds more than ${MAX_LISTED_FILES} files or ${MAX_LISTED_DIRS} directories; ` +
        `split files were looked for among the first ones listed`,
    });
  }
  const scope = await splitScope(dir, listing.files.filter(isAllowedDataFile), subset, warnings);
  if ('ok' in scope) return scope;
  if (scope.files.length === 0) {
    return peekFailure('no-split-file', `${scope.label} contains no data files (json, jsonl, parquet, csv, arrow)`);
  }
  if (scope.splitMap.size === 0)
    return peekFailure('no-split-file', `${scope.label}: no data files match the README.md data_files patterns`);

  const chosen = chooseSplitFiles(scope, splits, warnings);
  if ('ok' in chosen) return chosen;
  const toDirRel = (f: string) => (scope.prefix ? `${scope.prefix}/${f}` : f);
  return peekFiles(
    chosen.files.map((f) => nodePath.join(dir, ...toDirRel(f).split('/'))),
    chosen.module,
    limits,
    warnings,
  );
}

/** The data files `datasets` considers for a directory and how it splits them. */
interface SplitScope {
  /** The folder (relative to the dataset directory) the files are relative to: a README config's data_dir. */
  prefix: string;
  files: string[];
  splitMap: SplitMap;
  /** The directory as messages name it. */
  label: string;
  /** Explicit README data_files are authoritative: no looking for other files named after the split. */
  explicitFiles: boolean;
}

/** All the data files, or those under a README config's data_dir / the subset's folder, split as datasets would. */
async function splitScope(
  dir: string,
  dataFiles: string[],
  subset: string | null,
  warnings: PeekWarning[],
): Promise<SplitScope | PeekFailure> {
  const within = (prefix: string) => ({
    prefix,
    files: dataFiles.filter((f) => f.startsWith(prefix + '/')).map((f) => f.slice(prefix.length + 1)),
  });
  const meta = await readReadmeConfigs(dir);
  if (meta && meta.length > 0) {
    const chosen = chooseConfig(meta, subset);
    if ('error' in chosen) return peekFailure('no-split-file', `${dir}: ${chosen.error}`);
    const cfg = chosen.config;
    const scope =
      cfg.dataDir && normalizeRel(cfg.dataDir) ? within(normalizeRel(cfg.dataDir)) : { prefix: '', files: dataFiles };
    return {
      ...scope,
      splitMap: cfg.dataFiles ? resolvePatternDict(cfg.dataFiles, scope.files) : defaultSplitMap(scope.files),
      label: `${dir} (README.md config '${cfg.name}'${cfg.dataDir ? `, data_dir ${cfg.dataDir}` : ''})`,
      explicitFiles: cfg.dataFiles !== null,
    };
  }
  if (subset !== null) {
    const sub = within(normalizeRel(subset));
    if (sub.prefix && sub.files.length > 0) {
      warnings.push({
        code: 'subset-dir',
        message:
          `used ${sub.prefix}/ for subset_name '${subset}', but ${dir} has no README.md 'configs:' naming it: ` +
          `datasets.load_dataset ignores subset_name here and would read matching files of every subdirectory`,
      });
      return { ...sub, splitMap: defaultSplitMap(sub.files), label: `${dir}/${sub.prefix}`, explicitFiles: false };
    }
  }
  return { prefix: '', files: dataFiles, splitMap: defaultSplitMap(dataFiles), label: dir, explicitFiles: false };
}

/**
 * The files of the requested splits, in the one format datasets infers for them (all splits must agree; a split
 * datasets does not know is looked for among plainly named files, with a warning).
 */
function chooseSplitFiles(
  scope: SplitScope,
  splits: string[],
  warnings: PeekWarning[],
): { files: string[]; module: BuilderModule } | PeekFailure {
  const { splitMap, label } = scope;
  const modules = new Map<string, BuilderModule | null>();
  for (const [name, files] of splitMap) modules.set(name, inferModule(files));
  const distinct = [...new Set([...modules.values()].map((m) => m ?? 'none'))];
  if (distinct.length > 1) {
    warnings.push({
      code: 'mixed-formats',
      message:
        `splits of ${label} use different formats (${[...modules].map(([s, m]) => `${s}: ${m ?? 'none'}`).join(', ')}); ` +
        `datasets.load_dataset refuses this ("Couldn't infer the same data file format for all splits")`,
    });
  }

  const files: string[] = [];
  let module: BuilderModule | null = null;
  for (const split of splits) {
    let found: string[] | undefined = splitMap.get(split);
    if (!found) {
      const lenient = scope.explicitFiles ? [] : lenientSplitFiles(split, scope.files);
      if (lenient.length === 0) {
        const available = [...splitMap.keys()].join(', ');
        return peekFailure(
          'no-split-file',
          `${label} has no files for split '${split}' (datasets sees split${splitMap.size === 1 ? '' : 's'}: ${available})`,
        );
      }
      const hfSplits = [...splitMap].filter(([, fs]) => lenient.some((f) => fs.includes(f))).map(([s]) => s);
      warnings.push({
        code: 'unknown-split',
        message:
          `datasets.load_dataset(split='${split}') fails with Unknown split: it reads ${label} as split` +
          `${splitMap.size === 1 ? '' : 's'} ${[...splitMap.keys()].join(', ')}` +
          (hfSplits.length > 0 ? ` (the ${split} files belong to split '${hfSplits[0]}')` : '') +
          `; peeked ${lenient.slice(0, 3).join(', ')}${lenient.length > 3 ? ', ...' : ''}`,
      });
      found = lenient;
    }
    const m = modules.get(split) ?? inferModule(found);
    if (!m)
      return peekFailure(
        'unreadable',
        `${label}: the files of split '${split}' are in no format that datasets can load`,
      );
    module = module ?? m;
    for (const f of found) if (fileHasModule(f, module) && !files.includes(f)) files.push(f);
  }
  if (!module || files.length === 0)
    return peekFailure('no-split-file', `${label} has no data files for split '${splits.join('+')}'`);
  return { files, module };
}
