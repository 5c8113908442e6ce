/**
 * What an engine failure means when memory ran out. WebAssembly gives tfjs-backend-wasm one heap of at most 4 GiB
 * (wasm32); when a run needs more, tfjs' allocation does not fail cleanly: `malloc` answers 0 and the tensor is
 * placed at the heap's start. A tfjs kernel then writes past the end and the run dies with WebAssembly's
 * `RuntimeError: memory access out of bounds`; a kernel of the native addon (native/blas-matmul) checks its operands
 * first and throws `blas_matmul: <kernel>: an operand lies outside the heap`; a single tensor above what a typed array
 * may hold is a `RangeError` from the host. A native kernel's own scratch memory failing is `…: out of memory`. None
 * says which memory or what to do, so the run's error says what ran out and what to lower, keeping the original text.
 */

/** The run's error message for `e`, explained when it is memory running out on the wasm backend. */
export function explainOutOfMemory(e: unknown, backend: string): string {
  const message = e instanceof Error ? e.message : String(e);
  const what = backend.startsWith('wasm') ? whatRanOut(e) : undefined;
  if (!what) return message;
  return (
    `the wasm backend most likely ran out of memory (${message}): ${what}. ` +
    'Lower what a step holds at once (buffer.batch_size or buffer.train_batch_size, ' +
    'trainer.ppo_micro_batch_size_per_gpu, model.max_model_len / max_response_tokens) or use a smaller model; ' +
    'larger runs belong on a GPU (`--backend webgpu`) or on Trinity-RFT (trinityWorkbench.runWith: trinity).'
  );
}

const WASM_HEAP = 'WebAssembly gives it one heap of at most 4 GiB, a limit no setting raises';

/**
 * The native addon's messages (native/blas-matmul/src: `operand()` of train_kernels.c, decode_step.c's FAIL, the
 * sgemm / decodeAttention / swiglu checks of blas_matmul.c), with or without the kernel's name.
 */
const ADDON_OUTSIDE_HEAP =
  /\bblas_matmul: (?:\w+: )?(?:an operand|a layer operand is missing or) lies outside the heap/;
const ADDON_OUT_OF_MEMORY = /\bblas_matmul: (?:\w+: )?out of memory/;

/** Which memory ran out, when `e` is that; matched on the text too, as errors from a worker thread arrive. */
function whatRanOut(e: unknown): string | undefined {
  if (!(e instanceof Error)) return undefined;
  if (
    /\bmemory access out of bounds/.test(e.message) &&
    (e.name === 'RuntimeError' || /\bRuntimeError:/.test(e.message))
  )
    return WASM_HEAP;
  if (ADDON_OUTSIDE_HEAP.test(e.message)) return `${WASM_HEAP} (a tensor that did not fit was placed at its start)`;
  if (ADDON_OUT_OF_MEMORY.test(e.message)) return "the machine's memory, for a native kernel's scratch space";
  if (
    e instanceof RangeError &&
    /Invalid typed array length|Array buffer allocation failed|WebAssembly\.Memory/.test(e.message)
  )
    return WASM_HEAP;
  return undefined;
}
