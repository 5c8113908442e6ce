# The native BLAS matmul addon (see README.md): C files in src/, linked against the system OpenBLAS.
{
  "targets": [
    {
      "target_name": "blas_matmul",
      "sources": ["src/blas_matmul.c", "src/train_kernels.c", "src/decode_step.c", "src/sample_rows.c"],
      "cflags": ["-O3", "-fno-math-errno", "-Wall"],
      "libraries": ["-lopenblas", "-lm", "-lpthread"]
    }
  ]
}
