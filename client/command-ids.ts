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
  'trinityWorkbench.selectGpu',
  // TRN307's quick fix (the server's code action names it: server/service/client-commands.ts).
  'trinityWorkbench.addPluginDir',
] as const;
