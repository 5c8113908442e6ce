/** How a run reports a line to whoever started it (the CLI prints it; the editor shows it in the run's output). */
export type RunLog = (level: LogLevel, message: string) => void;

export type LogLevel = 'info' | 'warning' | 'error';
