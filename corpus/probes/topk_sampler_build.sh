#!/usr/bin/env bash
# Builds the C++ server's sampling library (libsampler.so) with its Makefile on this machine (CUDA 13 toolkit), as the
# server's build instructions say: make -j.
set -o pipefail
src=$(cd "$(dirname "$0")" && pwd)
w=${1:-/tmp/h9/libsampler}
rm -rf "$w" && mkdir -p "$w" && cp "$src/topk_sampler.cu" "$w/" && cp "$src/topk_sampler_Makefile" "$w/Makefile"
cd "$w" || exit 1
nvcc_bin=$(command -v nvcc)
echo "\$ make -j16 CUDA_HOME=$(dirname "$(dirname "$nvcc_bin")")"
make -j16 CUDA_HOME="$(dirname "$(dirname "$nvcc_bin")")"
