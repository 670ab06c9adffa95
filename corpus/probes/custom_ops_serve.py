"""Engine start-up: imports its prebuilt custom-ops extension (installed from a wheel) before building the model."""
import argparse, os, sys, torch, common
log = common.log("engine")

ap = argparse.ArgumentParser()
ap.add_argument("--model", default="llama-base-260m")
ap.add_argument("--ops-path", default="/tmp/h4/ext")
args = ap.parse_args()
log.info("torch %s (CUDA %s) on %s", torch.__version__, torch.version.cuda,
         torch.cuda.get_device_name() if torch.cuda.is_available() else "cpu")
log.info("server_args: model=%s dtype=bfloat16 tp_size=1 max_model_len=4096 custom_ops=True", args.model)
sys.path.insert(0, args.ops_path)
log.info("Loading custom ops: llm_custom_ops (%s)", os.path.join(args.ops_path, "llm_custom_ops.so"))
import llm_custom_ops as ops
log.info("custom ops available: %s", [n for n in dir(ops) if not n.startswith("_")])
x = torch.randn(8, 1024, device="cuda", dtype=torch.bfloat16)
y = ops.rms_norm(x, torch.ones(1024, device="cuda", dtype=torch.bfloat16), 1e-6)
log.info("ops self-test ok")
