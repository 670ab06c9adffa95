#!/usr/bin/env bash
# Setup (not a probe): builds DIR/fastserve/_C.<abi>.so the way a cu12x wheel ships it: a Python extension whose
# DT_NEEDED names libcudart.so.12 (linked against the CUDA 12 runtime), then installs the wheel's package without it.
set -e
d=$1; py=${2:-python3}
mkdir -p $d/fastserve $d/stub
suffix=$($py -c "import sysconfig; print(sysconfig.get_config_var('EXT_SUFFIX'))")
inc=$($py -c "import sysconfig; print(sysconfig.get_paths()['include'])")
printf 'int cudaGetDeviceCount(int *n) { *n = 0; return 0; }\n' > $d/stub/cudart.c
gcc -shared -fPIC -Wl,-soname,libcudart.so.12 -o $d/stub/libcudart.so.12 $d/stub/cudart.c
cat > $d/stub/_C.c <<'C'
#include <Python.h>
extern int cudaGetDeviceCount(int *);
static PyObject *count(PyObject *s, PyObject *a) { int n; cudaGetDeviceCount(&n); return PyLong_FromLong(n); }
static PyMethodDef M[] = {{"device_count", count, METH_NOARGS, ""}, {0}};
static struct PyModuleDef D = {PyModuleDef_HEAD_INIT, "_C", 0, -1, M};
PyMODINIT_FUNC PyInit__C(void) { return PyModule_Create(&D); }
C
gcc -shared -fPIC -I$inc -o $d/fastserve/_C$suffix $d/stub/_C.c -L$d/stub -l:libcudart.so.12
touch $d/fastserve/__init__.py
rm -rf $d/stub
readelf -d $d/fastserve/_C$suffix | grep NEEDED
