// Fused rotary embedding (neox style) for q and k in place, fp16/bf16, with a torch binding.
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <cuda_fp16.h>
#include <cuda_bf16.h>

template <typename T>
__global__ void rotary_kernel(T* __restrict__ q, T* __restrict__ k, const float* __restrict__ cos_sin,
                              const int64_t* __restrict__ positions, int num_heads, int num_kv_heads, int head_dim) {
  const int tok = blockIdx.x;
  const int half_dim = head_dim / 2;
  const float* cs = cos_sin + positions[tok] * head_dim;
  for (int i = threadIdx.x; i < num_heads * half_dim; i += blockDim.x) {
    const int h = i / half_dim, j = i % half_dim;
    T* row = q + ((size_t)tok * num_heads + h) * head_dim;
    const float x = (float)row[j], y = (float)row[j + half_dim];
    row[j] = (T)(x * cs[j] - y * cs[half_dim + j]);
    row[j + half_dim] = (T)(y * cs[j] + x * cs[half_dim + j]);
  }
  for (int i = threadIdx.x; i < num_kv_heads * half_dim; i += blockDim.x) {
    const int h = i / half_dim, j = i % half_dim;
    T* row = k + ((size_t)tok * num_kv_heads + h) * head_dim;
    const float x = (float)row[j], y = (float)row[j + half_dim];
    row[j] = (T)(x * cs[j] - y * cs[half_dim + j]);
    row[j + half_dim] = (T)(y * cs[j] + x * cs[half_dim + j]);
  }
}

void rotary_embedding(torch::Tensor q, torch::Tensor k, torch::Tensor cos_sin, torch::Tensor positions) {
  TORCH_CHECK(q.is_cuda() && k.is_cuda(), "q and k must be CUDA tensors");
  const int tokens = q.size(0), heads = q.size(1), kv_heads = k.size(1), head_dim = q.size(2);
  auto stream = at::cuda::getCurrentCUDAStream();
  if (q.scalar_type() == at::kHalf) {
    rotary_kernel<__half><<<tokens, 256, 0, stream>>>((__half*)q.data_ptr(), (__half*)k.data_ptr(),
        cos_sin.data_ptr<float>(), positions.data_ptr<int64_t>(), heads, kv_heads, head_dim);
  } else {
    rotary_kernel<__nv_bfloat16><<<tokens, 256, 0, stream>>>((__nv_bfloat16*)q.data_ptr(), (__nv_bfloat16*)k.data_ptr(),
        cos_sin.data_ptr<float>(), positions.data_ptr<int64_t>(), heads, kv_heads, head_dim);
  }
}

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) { m.def("rotary_embedding", &rotary_embedding, "fused rotary embedding"); }
