"""A scoring endpoint of a small serving engine (the /v1/score route used by the eval harness and the reward
pipeline): each request is a prompt plus a completion; the engine runs one forward pass over both and returns the
completion's summed log-probability. Prompt positions are masked out of the score with the label convention of the
training code (-100); the loss call takes its ignore_index from the tokenizer's pad id."""
import argparse, time

import torch
import torch.nn.functional as F
from transformers import LlamaConfig, LlamaForCausalLM

import common

log = common.log("scoring")

PAD_ID = 128004  # <|finetune_right_pad_id|>
IGNORE = -100


def build_batch(reqs, device):
    seqs, labels = [], []
    for prompt, completion in reqs:
        ids = prompt + completion
        seqs.append(ids)
        labels.append([IGNORE] * len(prompt) + completion)
    width = max(len(s) for s in seqs)
    input_ids = torch.full((len(seqs), width), PAD_ID, dtype=torch.long)
    lab = torch.full((len(seqs), width), IGNORE, dtype=torch.long)
    attn = torch.zeros((len(seqs), width), dtype=torch.long)
    for i, (s, l) in enumerate(zip(seqs, labels)):
        input_ids[i, :len(s)] = torch.tensor(s)
        lab[i, :len(l)] = torch.tensor(l)
        attn[i, :len(s)] = 1
    return input_ids.to(device), lab.to(device), attn.to(device)


@torch.inference_mode()
def score(model, reqs, device):
    input_ids, labels, attn = build_batch(reqs, device)
    logits = model(input_ids=input_ids, attention_mask=attn).logits.float()
    # next-token prediction: logits at t score the label at t+1
    shift_logits = logits[:, :-1].reshape(-1, logits.size(-1))
    shift_labels = labels[:, 1:].reshape(-1)
    nll = F.cross_entropy(shift_logits, shift_labels, ignore_index=PAD_ID, reduction="none")
    nll = nll.view(labels.size(0), -1)
    return (-(nll * (labels[:, 1:] != IGNORE))).sum(-1).tolist()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", default="Llama-3.2-1B-Instruct")
    ap.add_argument("--max-batch", type=int, default=8)
    args = ap.parse_args()
    device = torch.device("cuda")
    log.info("torch %s, device %s", torch.__version__, torch.cuda.get_device_name())
    cfg = LlamaConfig(vocab_size=128256, hidden_size=1024, intermediate_size=4096, num_hidden_layers=4,
                      num_attention_heads=16, num_key_value_heads=4, max_position_embeddings=8192,
                      pad_token_id=PAD_ID, bos_token_id=128000, eos_token_id=128009, tie_word_embeddings=True)
    log.info("loading %s for scoring (layers=%d hidden=%d vocab=%d, dtype=bfloat16)", args.model,
             cfg.num_hidden_layers, cfg.hidden_size, cfg.vocab_size)
    torch.manual_seed(0)
    model = LlamaForCausalLM(cfg).to(device=device, dtype=torch.bfloat16).eval()
    log.info("model loaded: %.2f GiB", torch.cuda.memory_allocated() / 2**30)
    log.info("route /v1/score ready (max_batch=%d)", args.max_batch)

    g = torch.Generator().manual_seed(1)
    def rand_ids(n):
        return torch.randint(1000, 120000, (n,), generator=g).tolist()
    batch = [(rand_ids(37 + 11 * i), rand_ids(9 + 3 * i)) for i in range(args.max_batch)]
    log.info("POST /v1/score: %d items (eval harness 'arc_challenge', loglikelihood)", len(batch))
    t0 = time.time()
    scores = score(model, batch, device)
    log.info("scored %d items in %.2fs: %s", len(scores), time.time() - t0, [round(s, 2) for s in scores])


if __name__ == "__main__":
    main()
