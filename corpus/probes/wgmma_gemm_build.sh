#!/usr/bin/env bash
# Builds the engine's Hopper GEMM kernel package with CMake + nvcc (CUDA 13) for the H100 it will serve on, as the
# package's README says: cmake -DCMAKE_CUDA_ARCHITECTURES=90.
set -o pipefail
src=$(cd "$(dirname "$0")" && pwd)
w=${1:-/tmp/h8/hopper_kernels}
rm -rf "$w" && mkdir -p "$w" && cp "$src/wgmma_gemm.cu" "$w/" && cp "$src/wgmma_gemm_CMakeLists.txt" "$w/CMakeLists.txt"
cd "$w" || exit 1
echo "\$ cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90"
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 || exit $?
echo "\$ cmake --build build -j16"
cmake --build build -j16
