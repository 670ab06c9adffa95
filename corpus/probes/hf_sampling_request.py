"""A minimal transformers-based completion service: each request carries its own sampling parameters."""
import argparse, json, time, torch, transformers, common
from transformers import LlamaConfig, LlamaForCausalLM
log = common.log("hf_service")

ap = argparse.ArgumentParser()
ap.add_argument("--requests", default='[{"id": "r1", "max_tokens": 16, "temperature": 0.7}, '
                                    '{"id": "r2", "max_tokens": 16, "temperature": 0.0}]')
args = ap.parse_args()
log.info("torch %s, transformers %s, %s", torch.__version__, transformers.__version__, torch.cuda.get_device_name())
cfg = LlamaConfig(vocab_size=32000, hidden_size=512, intermediate_size=1376, num_hidden_layers=2,
                  num_attention_heads=8, num_key_value_heads=8, max_position_embeddings=2048)
log.info("loading model (llama, %d layers, hidden %d)", cfg.num_hidden_layers, cfg.hidden_size)
torch.manual_seed(0)
model = LlamaForCausalLM(cfg).to("cuda", torch.bfloat16).eval()
log.info("model ready, listening on 0.0.0.0:8000")
for req in json.loads(args.requests):
    log.info("request %s: %s", req["id"], json.dumps(req))
    ids = torch.randint(3, 32000, (1, 24), device="cuda")
    t0 = time.time()
    out = model.generate(ids, attention_mask=torch.ones_like(ids), do_sample=True,
                         temperature=req["temperature"], max_new_tokens=req["max_tokens"], pad_token_id=0)
    log.info("request %s done: %d tokens in %.2f s", req["id"], out.shape[1] - ids.shape[1], time.time() - t0)
