/** The extension's settings (`trinityWorkbench.*`), read in one place with their defaults. */
import * as vscode from 'vscode';
import type { RunWith } from './launchers/launcher';

export interface RunSettings {
  runWith: RunWith;
  nodePath: string;
  pythonPath: string;
  rayAddress: string;
  backend: string;
  stopGraceMs: number;
  /** The nice value a local run starts at (0: the editor's own priority). */
  runNice: number;
  pluginDirs: string[];
  showProgressNotification: boolean;
}

export function runSettings(scope?: vscode.Uri): RunSettings {
  const c = vscode.workspace.getConfiguration('trinityWorkbench', scope);
  const runWith = c.get<string>('runWith', 'local');
  return {
    runWith: runWith === 'trinity' || runWith === 'ray-job' ? runWith : 'local',
    nodePath: c.get<string>('nodePath', ''),
    pythonPath: c.get<string>('pythonPath', 'python3'),
    rayAddress: c.get<string>('rayAddress', ''),
    backend: c.get<string>('backend', 'auto'),
    stopGraceMs: Math.max(0, c.get<number>('stopGracePeriodSeconds', 10)) * 1000,
    runNice: Math.min(19, Math.max(0, Math.round(c.get<number>('runNice', 10)))),
    pluginDirs: c.get<string[]>('pluginDirs', []),
    showProgressNotification: c.get<boolean>('showProgressNotification', true),
  };
}
