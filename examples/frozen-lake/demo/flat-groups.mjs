// How many GRPO groups of an explorer step got the same reward in every episode: GRPO gives each of their
// experiences advantage 0, so they teach nothing (Trinity records no metric for it; its grpo `std_threshold` drops
// them). Read from the GRPO stage's experience buffer (buffer/experience_buffer.jsonl, one experience a line, its
// group `eid.batch`/`eid.task`), a little more of the file each call.
import { closeSync, existsSync, openSync, readSync, statSync } from 'node:fs';

export class FlatGroups {
  /** @param {string} bufferFile the GRPO stage's experience_buffer.jsonl (it need not exist yet) */
  constructor(bufferFile) {
    this.file = bufferFile;
    this.offset = 0;
    this.partial = '';
    /** @type {Map<number, Map<number, number[]>>} rewards by explorer step (eid.batch), then by task */
    this.steps = new Map();
  }

  /** Reads what the buffer gained since the last call; returns `{ flat, groups }` of explorer step `step`. */
  of(step) {
    this.#readNew();
    const groups = [...(this.steps.get(step)?.values() ?? [])];
    return { flat: groups.filter((r) => r.every((x) => x === r[0])).length, groups: groups.length };
  }

  #readNew() {
    if (!existsSync(this.file)) return;
    const size = statSync(this.file).size;
    if (size <= this.offset) return;
    const fd = openSync(this.file, 'r');
    const chunk = Buffer.alloc(size - this.offset);
    try {
      readSync(fd, chunk, 0, chunk.length, this.offset);
    } finally {
      closeSync(fd);
    }
    this.offset = size;
    const lines = (this.partial + chunk.toString('utf8')).split('\n');
    this.partial = lines.pop() ?? '';
    for (const line of lines) {
      if (!line.trim()) continue;
      const { eid, reward } = JSON.parse(line);
      if (!this.steps.has(eid.batch)) this.steps.set(eid.batch, new Map());
      const tasks = this.steps.get(eid.batch);
      if (!tasks.has(eid.task)) tasks.set(eid.task, []);
      tasks.get(eid.task).push(reward);
    }
  }
}
