/**
 * The `trinity` task type: `{"type": "trinity", "config": "path/to.trinity.yaml"}` runs a config as the Run button
 * does (same checks, Runs view, Stop; closing the task's terminal stops the run), `"command": "check"` checks it
 * with the `$trinity` problem matcher. Tasks start runs from tasks.json and keybindings.
 */
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { RunController } from './runs/run-controller';

export const TASK_TYPE = 'trinity';

interface TrinityTaskDefinition extends vscode.TaskDefinition {
  config: string;
  command?: 'run' | 'check';
  resume?: boolean;
}

export class TrinityTasks implements vscode.TaskProvider {
  constructor(
    private readonly runs: RunController,
    private readonly cliPath: string,
  ) {}

  async provideTasks(): Promise<vscode.Task[]> {
    const files = await vscode.workspace.findFiles('**/*.trinity.{yaml,yml}', '**/node_modules/**', 200);
    return files.flatMap((f) => {
      const folder = vscode.workspace.getWorkspaceFolder(f);
      const config = folder ? path.relative(folder.uri.fsPath, f.fsPath) : f.fsPath;
      return [
        this.build({ type: TASK_TYPE, config }, folder),
        this.build({ type: TASK_TYPE, config, command: 'check' }, folder),
      ];
    });
  }

  resolveTask(task: vscode.Task): vscode.Task | undefined {
    const def = task.definition as TrinityTaskDefinition;
    if (typeof def.config !== 'string' || !def.config) return undefined;
    const folder = typeof task.scope === 'object' ? task.scope : undefined;
    return this.build(def, folder);
  }

  private build(def: TrinityTaskDefinition, folder: vscode.WorkspaceFolder | undefined): vscode.Task {
    const scope = folder ?? vscode.TaskScope.Workspace;
    const configPath = path.resolve(folder?.uri.fsPath ?? '', def.config);
    if (def.command === 'check') {
      // From the config's folder, where a Run starts: relative paths are checked where the run will open them.
      const exec = new vscode.ProcessExecution(process.execPath, [this.cliPath, 'check', configPath], {
        cwd: path.dirname(configPath),
        env: { ELECTRON_RUN_AS_NODE: '1' },
      });
      const task = new vscode.Task(def, scope, `check ${def.config}`, TASK_TYPE, exec, '$trinity');
      task.group = vscode.TaskGroup.Test;
      return task;
    }
    const exec = new vscode.CustomExecution(
      async (): Promise<vscode.Pseudoterminal> =>
        new RunTerminal(this.runs, vscode.Uri.file(configPath), def.resume === true),
    );
    const task = new vscode.Task(def, scope, `${def.resume ? 'resume' : 'run'} ${def.config}`, TASK_TYPE, exec, []);
    task.group = vscode.TaskGroup.Build;
    task.isBackground = false;
    return task;
  }
}

/** The terminal of a run task: the run's output, its end as the exit code (0 finished, 130 stopped, 1 failed). */
class RunTerminal implements vscode.Pseudoterminal {
  private readonly write = new vscode.EventEmitter<string>();
  private readonly closed = new vscode.EventEmitter<number>();
  readonly onDidWrite = this.write.event;
  readonly onDidClose = this.closed.event;
  private key: string | undefined;
  private sub: vscode.Disposable | undefined;

  constructor(
    private readonly runs: RunController,
    private readonly config: vscode.Uri,
    private readonly resume: boolean,
  ) {}

  async open(): Promise<void> {
    this.write.fire(`Running ${this.config.fsPath}\r\n`);
    const run = await this.runs.run(this.config, { resume: this.resume });
    if (!run) {
      this.write.fire('The run did not start (see the message and the Problems panel).\r\n');
      this.closed.fire(1);
      return;
    }
    this.key = run.state.key;
    this.sub = this.runs.manager.onOutput((state, line) => {
      if (state === run.state) this.write.fire(`${line.replace(/\n/g, '\r\n')}\r\n`);
    });
    const end = await run.handle.ended;
    this.write.fire(`\r\nRun ${end.status}${end.error ? `: ${end.error.replace(/\n/g, '\r\n')}` : ''}\r\n`);
    this.sub.dispose();
    this.closed.fire(end.status === 'finished' ? 0 : end.status === 'stopped' ? 130 : 1);
  }

  /** The user closed the terminal or terminated the task: stop the run. */
  handleInput(data: string): void {
    if (data === '\x03' && this.key) void this.runs.stop(this.key);
  }

  close(): void {
    if (this.key && this.runs.manager.get(this.key)?.state.live) void this.runs.stop(this.key);
  }
}
