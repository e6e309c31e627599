// The loops of examples/vector_add, matvec and matmul written in C++, for
// bench/cpu to compare the CPU target with g++ -O3 -march=native (built
// with those flags; see CMakeLists.txt).
#include <cstdint>

void ref_vector_add(const float* __restrict__ a, const float* __restrict__ b, float* __restrict__ out, int n) {
  for (int i = 0; i < n; ++i) out[i] = a[i] + b[i];
}

void ref_matvec(const float* __restrict__ A, const float* __restrict__ x, float* __restrict__ y, int n, int m) {
  for (int i = 0; i < n; ++i) {
    float acc = 0;
    for (int k = 0; k < m; ++k) acc = acc + A[i * m + k] * x[k];
    y[i] = acc;
  }
}

void ref_matmul(const float* __restrict__ a, const float* __restrict__ b, float* __restrict__ c, int n, int m, int l) {
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < m; ++j) {
      float acc = 0;
      for (int k = 0; k < l; ++k) acc = acc + a[i * l + k] * b[k * m + j];
      c[i * m + j] = acc;
    }
}
