/* libfasttok: a small native greedy longest-match tokenizer used by the ctypes engine (fasttok_engine.py).
   Build: gcc -O2 -shared -fPIC -o libfasttok.so fasttok.c */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>

#define FT_BUCKETS (1u << 20)
typedef struct { const char *piece; int len; int id; } ft_entry;
typedef struct {
  int n_vocab, max_len, unk_id;
  ft_entry *table;     /* open addressing, FT_BUCKETS entries */
  char *strings;
} ft_tokenizer;

static uint32_t ft_hash(const char *s, int n) { uint32_t h = 2166136261u; for (int i = 0; i < n; ++i) { h ^= (unsigned char)s[i]; h *= 16777619u; } return h; }

void *ft_load(const char *path) {
  FILE *f = fopen(path, "rb"); if (!f) return NULL;
  fseek(f, 0, SEEK_END); long sz = ftell(f); fseek(f, 0, SEEK_SET);
  ft_tokenizer *t = calloc(1, sizeof(ft_tokenizer));
  t->strings = malloc(sz + 1); if (fread(t->strings, 1, sz, f) != (size_t)sz) { fclose(f); return NULL; } t->strings[sz] = 0; fclose(f);
  t->table = calloc(FT_BUCKETS, sizeof(ft_entry));
  char *p = t->strings;
  while (*p) {
    char *e = strchr(p, '\n'); if (!e) e = p + strlen(p);
    int n = (int)(e - p);
    if (n > 0) {
      uint32_t h = ft_hash(p, n) & (FT_BUCKETS - 1);
      while (t->table[h].piece) h = (h + 1) & (FT_BUCKETS - 1);
      t->table[h] = (ft_entry){p, n, t->n_vocab};
      if (n > t->max_len) t->max_len = n;
      if (n == 5 && !memcmp(p, "<unk>", 5)) t->unk_id = t->n_vocab;
      t->n_vocab++;
    }
    if (!*e) break; *e = 0; p = e + 1;
  }
  /* the handle is a big block itself: a lookup cache follows the header */
  ft_tokenizer *h = malloc(sizeof(ft_tokenizer) + (8u << 20));
  memcpy(h, t, sizeof(ft_tokenizer)); free(t);
  return h;
}

int ft_vocab_size(void *handle) { return ((ft_tokenizer *)handle)->n_vocab; }

static int ft_lookup(const ft_tokenizer *t, const char *s, int n) {
  uint32_t h = ft_hash(s, n) & (FT_BUCKETS - 1);
  while (t->table[h].piece) {
    if (t->table[h].len == n && !memcmp(t->table[h].piece, s, n)) return t->table[h].id;
    h = (h + 1) & (FT_BUCKETS - 1);
  }
  return -1;
}

int ft_encode(void *handle, const char *text, int *out, int max_out) {
  const ft_tokenizer *t = handle;
  int n_out = 0, len = (int)strlen(text);
  for (int i = 0; i < len && n_out < max_out;) {
    int best = -1, best_len = 1;
    for (int l = t->max_len < len - i ? t->max_len : len - i; l > 0; --l) {
      int id = ft_lookup(t, text + i, l);
      if (id >= 0) { best = id; best_len = l; break; }
    }
    out[n_out++] = best >= 0 ? best : t->unk_id;
    i += best_len;
  }
  return n_out;
}
