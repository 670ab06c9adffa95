"""Setup for run-h7.sh (not a probe): model folders under DIR (default /tmp/h7).

  yarn-longctx-7b/   a small Llama checkpoint (transformers format) whose config.json was edited by hand after export to
                     turn on YaRN for a longer context: a v4-style rope_scaling block without its "factor"
"""
import json, os, sys
import torch

out = sys.argv[1] if len(sys.argv) > 1 else "/tmp/h7"
os.makedirs(out, exist_ok=True)
torch.manual_seed(0)


def yarn_model():
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast
    words = ("the a of to and is in it you that he was for on are with as I his they be at one have this from "
             "summarise following contract three sentences clause party shall agreement").split()
    base = ["<unk>", "<s>", "</s>"] + list(dict.fromkeys(words))
    base += [f"tok{i}" for i in range(4096 - len(base))]
    tok = Tokenizer(models.WordLevel(vocab={w: i for i, w in enumerate(base)}, unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    hf_tok = PreTrainedTokenizerFast(tokenizer_object=tok, unk_token="<unk>", bos_token="<s>", eos_token="</s>")
    cfg = LlamaConfig(hidden_size=512, intermediate_size=1376, num_hidden_layers=4, num_attention_heads=8,
                      num_key_value_heads=8, vocab_size=4096, max_position_embeddings=8192, bos_token_id=1,
                      eos_token_id=2)
    model = LlamaForCausalLM(cfg).to(torch.bfloat16)
    d = os.path.join(out, "yarn-longctx-7b")
    model.save_pretrained(d)
    hf_tok.save_pretrained(d)
    p = os.path.join(d, "config.json")
    c = json.load(open(p))
    c.pop("rope_parameters", None)
    c["rope_theta"] = 10000.0
    c["max_position_embeddings"] = 32768
    c["rope_scaling"] = {"type": "yarn", "original_max_position_embeddings": 8192}
    json.dump(c, open(p, "w"), indent=2)
    print("wrote", d, json.dumps(c))


yarn_model()
