"""The model was trained with tokenizer r1; the server loads tokenizer r2 (same words, retrained, so the ids are in another order).
Nothing fails: the completions come back as word salad."""
import json, os, tempfile, torch, common
from tokenizers import Tokenizer, models, pre_tokenizers, decoders
from transformers import PreTrainedTokenizerFast
log = common.log("engine")

CORPUS = ("the cat sat on the warm mat near the old kitchen door while rain fell over the quiet town and "
          "a small boy read his book by the window until his mother called him for supper at seven when "
          "the bells of the church rang across green fields where sheep slept under tall oak trees beside "
          "a narrow river that ran down from snowy mountains toward the distant grey sea")
words = list(dict.fromkeys(CORPUS.split()))


def build(path, specials, order):
    vocab = {t: i for i, t in enumerate(specials + order)}
    tok = Tokenizer(models.WordLevel(vocab=vocab, unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    tok.decoder = decoders.WordPiece(prefix="##")
    tok.save(path)
    return len(vocab)


tmp = tempfile.mkdtemp(prefix="tok-")
base = ["<unk>", "<s>", "</s>", "<pad>"]
n1 = build(os.path.join(tmp, "tokenizer-r1.json"), base, words)
n2 = build(os.path.join(tmp, "tokenizer-r2.json"), base, sorted(words, key=lambda w: (-CORPUS.split().count(w), w)))
tok_r1 = PreTrainedTokenizerFast(tokenizer_file=os.path.join(tmp, "tokenizer-r1.json"), unk_token="<unk>", eos_token="</s>")

# "Training": a bigram language model fitted on the corpus as tokenized with r1.
V = 128
ids = tok_r1(CORPUS)["input_ids"]
counts = torch.full((V, V), 1e-3)
for a, b in zip(ids, ids[1:]):
    counts[a, b] += 1.0
model = torch.nn.Embedding(V, V).cuda()
with torch.no_grad():
    model.weight.copy_(torch.log(counts / counts.sum(-1, keepdim=True)))

log.info("torch %s on %s", torch.__version__, torch.cuda.get_device_name())
log.info("Loaded model: bigram-lm (vocab_size=%d, padded), weights from checkpoint revision r1", V)
tokenizer = PreTrainedTokenizerFast(tokenizer_file=os.path.join(tmp, "tokenizer-r2.json"), unk_token="<unk>", eos_token="</s>")
log.info("Loaded tokenizer from %s (vocab_size=%d)", os.path.join(tmp, "tokenizer-r2.json"), len(tokenizer))
log.info("Server ready")
for rid, prompt in enumerate(["the cat sat on the", "a small boy read his", "the bells of the church"]):
    inp = tokenizer(prompt, return_tensors="pt")["input_ids"].cuda()
    log.info("request %d: prompt=%r prompt_tokens=%d max_new_tokens=12", rid, prompt, inp.shape[1])
    out = inp[0].tolist()
    cur = inp[0, -1:]
    for step in range(12):
        cur = model(cur).argmax(-1)
        out.append(cur.item())
    text = tokenizer.decode(out[inp.shape[1]:], skip_special_tokens=True)
    log.info("request %d finished: completion_tokens=12 text=%r", rid, text)
