"""Setup for custom_ops_serve.py (not itself a probe): builds the 'llm_custom_ops' extension the way a wheel built for an
older torch (before 2.7, whose pip wheels used the pre-C++11 libstdc++ ABI) was built, into OUTDIR."""
import os, sys, torch
from torch.utils.cpp_extension import load

out = sys.argv[1] if len(sys.argv) > 1 else "/tmp/h4/ext"
os.makedirs(out, exist_ok=True)
src = os.path.join(out, "custom_ops.cpp")
with open(src, "w") as f:
    f.write(r'''
#include <torch/extension.h>

torch::Tensor rms_norm(torch::Tensor x, torch::Tensor w, double eps) {
  TORCH_CHECK(x.size(-1) == w.size(0), "rms_norm: hidden size mismatch: ", x.size(-1), " vs ", w.size(0));
  auto var = x.to(torch::kFloat).pow(2).mean(-1, true);
  return (x.to(torch::kFloat) * torch::rsqrt(var + eps)).to(x.scalar_type()) * w;
}

torch::Tensor silu_and_mul(torch::Tensor x) {
  TORCH_CHECK(x.size(-1) % 2 == 0, "silu_and_mul: last dim must be even");
  auto d = x.size(-1) / 2;
  return torch::silu(x.narrow(-1, 0, d)) * x.narrow(-1, d, d);
}

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
  m.def("rms_norm", &rms_norm, "RMSNorm");
  m.def("silu_and_mul", &silu_and_mul, "SiLU and mul");
}
''')
try:
    load(name="llm_custom_ops", sources=[src], build_directory=out, extra_cflags=["-O2", "-D_GLIBCXX_USE_CXX11_ABI=0"],
         verbose=True)
    print("built and imported (unexpected)")
except ImportError as e:
    print("built; import fails here:", e)
print(os.listdir(out))
