# The native BLAS matmul addon (see README.md): one C file, linked against the system OpenBLAS.
{
  "targets": [
    {
      "target_name": "blas_matmul",
      "sources": ["src/blas_matmul.c", "src/train_kernels.c"],
      "cflags": ["-O3", "-fno-math-errno", "-Wall"],
      "libraries": ["-lopenblas", "-lm", "-lpthread"]
    }
  ]
}
