/** The extension's command ids (no `vscode` import, so that a test can hold them to package.json). */
export const COMMANDS = [
  'trinityWorkbench.run',
  'trinityWorkbench.stop',
  'trinityWorkbench.resume',
  'trinityWorkbench.rerun',
  'trinityWorkbench.showRuns',
  'trinityWorkbench.refreshRuns',
  'trinityWorkbench.showRunOutput',
  'trinityWorkbench.revealJobFolder',
  'trinityWorkbench.openRunConfig',
  'trinityWorkbench.deleteRun',
  'trinityWorkbench.openDashboard',
  'trinityWorkbench.compareRuns',
  'trinityWorkbench.checkAllConfigs',
  'trinityWorkbench.newConfigFromExample',
  'trinityWorkbench.createSmallModel',
  'trinityWorkbench.selectRelease',
] as const;
