/* Host-side sampling helpers for sampler_native.py (built into libfastsample.so). */
#include <stdint.h>
#include <stddef.h>

typedef struct {
    float temperature;
    float repetition_penalty;
    int32_t n_bad_words;
    const int32_t *bad_words;      /* token ids to ban; NULL when the request sets none */
} sampling_params_t;

/* logits: [vocab] floats for one sequence; prev: the sequence's previous output tokens. */
int32_t penalize_and_argmax(float *logits, int32_t vocab, const int32_t *prev, int32_t n_prev, const sampling_params_t *p) {
    for (int32_t i = 0; i < n_prev; i++) {
        int32_t t = prev[i];
        float l = logits[t];
        logits[t] = l > 0 ? l / p->repetition_penalty : l * p->repetition_penalty;
    }
    /* ban the request's bad words from the second token on */
    if (n_prev > 0) {
        for (int32_t i = 0; i < 64 && p->bad_words[i] >= 0; i++)
            logits[p->bad_words[i]] = -1e30f;
    }
    int32_t best = 0;
    for (int32_t i = 1; i < vocab; i++)
        if (logits[i] > logits[best]) best = i;
    return best;
}
