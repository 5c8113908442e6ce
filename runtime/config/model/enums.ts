/** Trinity's Python enums that config fields are typed with (trinity/common/constants.py). */
import type { EnumDef } from './types';

export const PromptType: EnumDef = {
  name: 'PromptType',
  members: [
    { value: 'messages', doc: 'Each row holds a list of chat messages (`messages_key`).' },
    { value: 'plaintext', doc: 'Each row holds plain prompt and response text (`prompt_key`, `response_key`).' },
  ],
};

export const StorageType: EnumDef = {
  name: 'StorageType',
  members: [
    {
      value: 'file',
      doc: 'A local file or directory, or a Hugging Face dataset (read through `datasets.load_dataset`).',
    },
    { value: 'queue', doc: 'An in-memory queue shared by explorer and trainer; optionally persisted to `path`.' },
    { value: 'sql', doc: 'A SQL database table (`path` is a URL such as `sqlite:///buffer.db`).' },
  ],
};

export const SyncMethod: EnumDef = {
  name: 'SyncMethod',
  members: [
    { value: 'nccl', doc: 'Broadcast weights from trainer to rollout engines over NCCL. Only in `both` mode.' },
    { value: 'checkpoint', doc: 'The trainer saves a checkpoint; explorers load it. Works across separate processes.' },
    {
      value: 'memory',
      doc: 'The trainer hands the state dict to the synchronizer actor in memory; explorers pull it.',
    },
  ],
  aliases: [
    { alias: 'online', member: 'nccl', since: 'v0.5.0' },
    { alias: 'offline', member: 'checkpoint', since: 'v0.5.0' },
  ],
};

export const SyncStyle: EnumDef = {
  name: 'SyncStyle',
  members: [
    { value: 'fixed', doc: 'Sync every `sync_interval` steps (after `sync_offset`).' },
    {
      value: 'dynamic_by_trainer',
      doc: 'The trainer decides when to sync, after `sync_interval` trainer steps.',
      until: 'v0.4.0',
    },
    {
      value: 'dynamic_by_explorer',
      doc: 'The explorer requests a sync after `sync_interval` explorer steps.',
      until: 'v0.4.0',
    },
    {
      value: 'trainer_driven',
      doc: 'The trainer decides when to sync, after `sync_interval` trainer steps.',
      since: 'v0.5.0',
    },
    {
      value: 'explorer_driven',
      doc: 'The explorer requests a sync after `sync_interval` explorer steps.',
      since: 'v0.5.0',
    },
    {
      value: 'fully_async',
      doc: 'Fully asynchronous: the explorer keeps up to `explorer.max_inflight_batches` train batches in flight instead of waiting at sync points. Eval tasksets are not supported.',
      since: 'main',
    },
  ],
  aliases: [
    { alias: 'dynamic_by_trainer', member: 'trainer_driven', since: 'v0.5.0' },
    { alias: 'dynamic_by_explorer', member: 'explorer_driven', since: 'v0.5.0' },
  ],
};

export const SaveStrategy: EnumDef = {
  name: 'SaveStrategy',
  members: [
    { value: 'single_thread', doc: 'One thread at a time writes checkpoints.' },
    { value: 'single_process', doc: 'One process at a time writes checkpoints.' },
    { value: 'single_node', doc: 'One node at a time writes checkpoints.' },
    { value: 'unrestricted', doc: 'All ranks write checkpoints concurrently.' },
  ],
};
