/** The client commands that the server's code actions run (the extension registers them: client/command-ids.ts). */

/** `[dir]`: adds a folder (absolute) to the workspace's `trinityWorkbench.pluginDirs`. */
export const ADD_PLUGIN_DIR_COMMAND = 'trinityWorkbench.addPluginDir';
