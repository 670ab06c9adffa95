"""setup.py of a small fused-rotary CUDA extension (run as `python setup.py build_ext --inplace` from a copy of this file
named setup.py, next to rotary_ext_kernels.cu)."""
import os
from setuptools import setup
from torch.utils.cpp_extension import BuildExtension, CUDAExtension

# Volta, Ampere and Hopper builds, as in the project's README
NVCC_FLAGS = [
    "-O3", "--use_fast_math", "-std=c++17",
    "-U__CUDA_NO_HALF_OPERATORS__", "-U__CUDA_NO_HALF_CONVERSIONS__",
    "-gencode", "arch=compute_70,code=sm_70",
    "-gencode", "arch=compute_80,code=sm_80",
    "-gencode", "arch=compute_90,code=sm_90",
]

setup(
    name="fused_rotary",
    version="0.3.1",
    ext_modules=[
        CUDAExtension(
            name="fused_rotary_cuda",
            sources=["rotary_ext_kernels.cu"],
            extra_compile_args={"cxx": ["-O3", "-std=c++17"], "nvcc": NVCC_FLAGS},
        )
    ],
    cmdclass={"build_ext": BuildExtension},
)
