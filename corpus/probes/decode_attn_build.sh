#!/usr/bin/env bash
# Builds the C++ server's paged decode-attention library (libdecodeattn.so) with its Makefile on this machine (CUDA 13
# toolkit), after the kernel was extended from head_dim 128 to 256 for Gemma-2: make -j16.
set -o pipefail
src=$(cd "$(dirname "$0")" && pwd)
w=${1:-/tmp/h10/libdecodeattn}
rm -rf "$w" && mkdir -p "$w" && cp "$src/decode_attn_hd256.cu" "$w/decode_attn.cu" && cp "$src/decode_attn_Makefile" "$w/Makefile"
cd "$w" || exit 1
nvcc_bin=$(command -v nvcc)
echo "\$ make -j16 CUDA_HOME=$(dirname "$(dirname "$nvcc_bin")")"
make -j16 CUDA_HOME="$(dirname "$(dirname "$nvcc_bin")")"
