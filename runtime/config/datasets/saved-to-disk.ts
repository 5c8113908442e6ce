/** Directories written by `datasets`' save_to_disk: their columns are listed, their arrow rows are not read. */
import { promises as fsp } from 'node:fs';
import * as nodePath from 'node:path';
import { isPlainObject } from './json-records';
import { peekFailure, type PeekResult } from './peek-result';
import { readSmallJson, statOrNull } from './small-files';

/** The peek of a save_to_disk directory (a Dataset, or a DatasetDict's requested split); null when `dir` is none. */
export async function peekSavedToDisk(dir: string, splits: string[]): Promise<PeekResult | null> {
  const dictJson = await readSmallJson(nodePath.join(dir, 'dataset_dict.json'));
  if (dictJson !== undefined) {
    const names =
      isPlainObject(dictJson) && Array.isArray(dictJson.splits)
        ? dictJson.splits.filter((s): s is string => typeof s === 'string')
        : [];
    const split = splits[0];
    if (!names.includes(split) || !(await statOrNull(nodePath.join(dir, split)))?.isDirectory()) {
      return peekFailure(
        'no-split-file',
        `${dir} was written by datasets' save_to_disk (a DatasetDict) and has no split '${split}' (splits: ${names.join(', ') || 'none'})`,
      );
    }
    return savedToDiskPeek(nodePath.join(dir, split), `${dir} (split '${split}')`);
  }
  const hasInfo = !!(await statOrNull(nodePath.join(dir, 'dataset_info.json')))?.isFile();
  const hasState = !!(await statOrNull(nodePath.join(dir, 'state.json')))?.isFile();
  if (!hasInfo && !hasState) return null;
  let arrow = false;
  try {
    arrow = (await fsp.readdir(dir)).some((n) => n.toLowerCase().endsWith('.arrow'));
  } catch {
    arrow = false;
  }
  if (!arrow) return null;
  return savedToDiskPeek(dir, dir);
}

async function savedToDiskPeek(dir: string, label: string): Promise<PeekResult> {
  const info = await readSmallJson(nodePath.join(dir, 'dataset_info.json'));
  const state = await readSmallJson(nodePath.join(dir, 'state.json'));
  const columns = isPlainObject(info) && isPlainObject(info.features) ? Object.keys(info.features) : [];
  let files: string[] = [];
  if (isPlainObject(state) && Array.isArray(state._data_files)) {
    files = state._data_files
      .map((f) => (isPlainObject(f) && typeof f.filename === 'string' ? nodePath.join(dir, f.filename) : null))
      .filter((f): f is string => f !== null);
  }
  if (files.length === 0) {
    try {
      files = (await fsp.readdir(dir))
        .filter((n) => n.toLowerCase().endsWith('.arrow'))
        .sort()
        .map((n) => nodePath.join(dir, n));
    } catch {
      files = [];
    }
  }
  return {
    ok: true,
    peek: {
      files,
      format: 'arrow',
      rows: [],
      columns,
      warnings: [
        {
          code: 'saved-to-disk',
          message:
            `arrow, not peeked: ${label} was written by datasets' save_to_disk; ` +
            `datasets.load_dataset (which Trinity uses) cannot load it, it needs load_from_disk` +
            (columns.length > 0 ? '; columns come from dataset_info.json' : ''),
        },
      ],
    },
  };
}
