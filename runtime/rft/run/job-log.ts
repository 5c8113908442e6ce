/** How a job reports progress lines to whoever started it (the CLI prints them; the editor shows them). */
export type JobLog = (level: 'info' | 'warning' | 'error', message: string) => void;
