"""Setup for run-h8.sh (not a probe): model folders and deploy folders under DIR (default /tmp/h8).

  fasttok-model/        config.json + vocab.txt for fasttok_engine.py (run-h8.sh builds libfasttok.so into it)
  app/                  a deploy folder: fused_rmsnorm_serve.py copied as serve.py, common.py, and the team's triton.py
                        (a Triton Inference Server client helper kept next to the server)
  tiny-llama-nopad/     a small Llama checkpoint (transformers format) whose tokenizer defines no pad token
  bpe-chat/             a byte-level BPE tokenizer (tokenizer.json, 400 pieces, trained on English text) and the weights
                        of a tiny model fine-tuned to answer one French prompt (position-keyed, greedy)
"""
import json, os, shutil, sys
import torch

here = os.path.dirname(os.path.abspath(__file__))
out = sys.argv[1] if len(sys.argv) > 1 else "/tmp/h8"
os.makedirs(out, exist_ok=True)
torch.manual_seed(0)
which = set(sys.argv[2:])
def want(n):
    return not which or n in which

WORDS = ("the a of to and in is it you that he was for on are with as I his they be at one have this from or had by "
         "not word but what some we can out other were all there when up use your how said an each she which do their "
         "time if will way about many then them write would like so these her long make thing see him two has look more "
         "hello my name is Hello , . ! ?").split()


def fasttok_model():
    d = os.path.join(out, "fasttok-model")
    os.makedirs(d, exist_ok=True)
    pieces = ["<unk>", "<s>", "</s>", " "] + [chr(c) for c in range(33, 127)]
    pieces += list(dict.fromkeys(w for w in WORDS if w not in pieces))
    pieces += [" " + w for w in dict.fromkeys(WORDS)]
    pieces += [f"<extra_{i}>" for i in range(32000 - len(pieces))]
    with open(os.path.join(d, "vocab.txt"), "w", encoding="utf-8") as f:
        f.write("\n".join(pieces) + "\n")
    json.dump({"architectures": ["LlamaForCausalLM"], "model_type": "llama", "vocab_size": 32000, "hidden_size": 2048,
               "num_hidden_layers": 4, "tokenizer": "libfasttok"}, open(os.path.join(d, "config.json"), "w"))
    print("wrote", d)


def app_dir():
    d = os.path.join(out, "app")
    os.makedirs(d, exist_ok=True)
    shutil.copy(os.path.join(here, "fused_rmsnorm_serve.py"), os.path.join(d, "serve.py"))
    shutil.copy(os.path.join(here, "common.py"), os.path.join(d, "common.py"))
    shutil.copy(os.path.join(here, "h8_triton_client.py"), os.path.join(d, "triton.py"))
    print("wrote", d, sorted(os.listdir(d)))


def nopad_model():
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast
    base = ["<unk>", "<s>", "</s>"] + list(dict.fromkeys(WORDS))
    base += [f"tok{i}" for i in range(8192 - len(base))]
    tok = Tokenizer(models.WordLevel(vocab={w: i for i, w in enumerate(base)}, unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    hf_tok = PreTrainedTokenizerFast(tokenizer_object=tok, unk_token="<unk>", bos_token="<s>", eos_token="</s>")
    cfg = LlamaConfig(hidden_size=512, intermediate_size=1376, num_hidden_layers=4, num_attention_heads=8,
                      num_key_value_heads=8, vocab_size=8192, max_position_embeddings=4096, bos_token_id=1,
                      eos_token_id=2)
    model = LlamaForCausalLM(cfg).to(torch.bfloat16)
    d = os.path.join(out, "tiny-llama-nopad")
    model.save_pretrained(d)
    hf_tok.save_pretrained(d)
    print("wrote", d, sorted(os.listdir(d)))


ENGLISH = ("The quick brown fox jumps over the lazy dog. It was the best of times, it was the worst of times. "
           "In the beginning the universe was created. This has made a lot of people very angry and been widely "
           "regarded as a bad move. Call me Ishmael. All happy families are alike; each unhappy family is unhappy "
           "in its own way. Translate the following sentence into French. Answer the question in one sentence. ")
ANSWER = "La crème brûlée du café à Zürich était délicieuse, et le garçon a été très aimable."
PROMPT = "Translate to French: The crème brûlée at the café in Zürich was delicious, and the waiter was very kind."


def bpe_chat():
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    d = os.path.join(out, "bpe-chat")
    os.makedirs(d, exist_ok=True)
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=400, initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
                                  special_tokens=["<|endoftext|>"])
    tok.train_from_iterator([ENGLISH] * 50, trainer=trainer)
    tok.save(os.path.join(d, "tokenizer.json"))
    ids = tok.encode(ANSWER).ids + [tok.token_to_id("<|endoftext|>")]
    prompt_len = len(tok.encode(PROMPT).ids)
    V, H, P = tok.get_vocab_size(), 256, 512
    pos = torch.zeros(P, H)
    pos[:, :] = torch.randn(P, H) * 0.01
    head = torch.randn(V, H) * 0.01
    # position p of the answer (absolute position prompt_len + p - 1) is keyed to unit vector e_p, whose head row is
    # the answer's next token
    for p, t in enumerate(ids):
        pos[prompt_len + p - 1, p] = 4.0
        head[t, p] = 4.0
    torch.save({"pos_embed": pos.to(torch.bfloat16), "lm_head": head.to(torch.bfloat16),
                "config": {"vocab_size": V, "hidden_size": H, "max_position_embeddings": P}},
               os.path.join(d, "model.pt"))
    json.dump({"prompt": PROMPT}, open(os.path.join(d, "example.json"), "w"), ensure_ascii=False)
    print("wrote", d, "vocab", V, "answer tokens", len(ids), "prompt tokens", prompt_len)


if want("fasttok"):
    fasttok_model()
if want("app"):
    app_dir()
if want("nopad"):
    nopad_model()
if want("bpe"):
    bpe_chat()
