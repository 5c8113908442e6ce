/** A minimal explore-mode config reading one local taskset, for the dataset checks' tests. */
export function tasksetConfig(
  path: string,
  format: { prompt_key: string; response_key: string },
  opts: { split?: string; workflow?: string; workflowOnTaskset?: boolean } = {},
): string {
  const workflow = `default_workflow_type: ${opts.workflow ?? 'math_workflow'}`;
  return [
    'mode: explore',
    'model:',
    '  model_path: m',
    '  max_model_len: 1024',
    'buffer:',
    '  explorer_input:',
    '    taskset:',
    `      path: ${path}`,
    `      split: ${opts.split ?? 'train'}`,
    ...(opts.workflowOnTaskset ? [`      ${workflow}`] : []),
    '      format:',
    `        prompt_key: ${format.prompt_key}`,
    `        response_key: ${format.response_key}`,
    ...(opts.workflowOnTaskset ? [] : [`    ${workflow}`]),
    '',
  ].join('\n');
}
