#!/usr/bin/env bash
# Builds the engine's split-K autotuner with CMake + nvcc on this machine (CUDA 13), as its README says.
set -o pipefail
src=$(cd "$(dirname "$0")" && pwd)
w=${1:-/tmp/h7/splitk_tune}
rm -rf "$w" && mkdir -p "$w" && cp "$src/splitk_tune.cu" "$w/" && cp "$src/splitk_tune_CMakeLists.txt" "$w/CMakeLists.txt"
cd "$w" || exit 1
echo "\$ cmake -S . -B build -DCMAKE_BUILD_TYPE=Release"
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release || exit $?
echo "\$ cmake --build build -j16"
cmake --build build -j16
