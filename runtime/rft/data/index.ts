/** Reading tasksets and train-mode (SFT/DPO) datasets as Trinity-RFT does. */
export { DataError } from '../../config/datasets/data-error';
export { parseSplit } from '../../config/datasets/split-expression';
export { describeSource, loadDatasetRows } from './load-dataset';
export type { DatasetLocation, LoadedDataset, LoadedRow, LoadOptions, RowSource, SkippedRow } from './load-dataset';
export { defaultRequiredKeys, readTasks, resolveFormat, resolveTaskset, taskBatchReader, taskScheduler } from './tasks';
export type {
  ReadTasksOptions,
  ReadTasksResult,
  ResolvedTaskset,
  Task,
  TaskReaderOptions,
  TasksetInput,
} from './tasks';
export {
  createFormatter,
  DpoFormatter,
  readTrainData,
  SftFormatter,
  trainBatchReader,
  truncateExperience,
} from './train-data';
export type {
  FormatterOptions,
  FormatterStats,
  TrainDataOptions,
  TrainDataResult,
  TrainDatasetInput,
  TrainSchema,
} from './train-data';
export { ChatRenderer } from './chat';
export type { ChatRenderOptions, Message } from './chat';
export { BatchReader, MultiReaderScheduler, SUPPORTED_SELECTORS } from './reader';
export type { Batch, BatchReaderOptions, SelectorFeedback } from './reader';
export { defaultRng, NumpyGenerator } from '../numpy/numpy-random';
