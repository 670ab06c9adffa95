//! Failures without an error line: output that is garbage, repeats or mixes
//! scripts (wrong output), and a start-up that stopped mid-way.

use super::*;

/// No crash: look for signs the output was wrong, else a log that stops mid-way
/// (a progress bar short of 100 %, NCCL still setting up), which is what a hang
/// looks like in a log.
pub(super) fn wrong_output(voc: &Vocabulary, f: &LogFacts) -> Option<Failure> {
    wrong_output_lines(voc, f).or_else(|| stopped_mid_way(voc, f))
}

pub(super) fn stopped_mid_way(voc: &Vocabulary, f: &LogFacts) -> Option<Failure> {
    // The last in-progress line among the final lines, with nothing finished after it.
    let (source, line, text) = f.last_lines.iter().rev().find_map(|(s, l, t)| {
        let caps = voc.shape(ShapeId::Progress).captures(t)?;
        let pct = caps
            .get(1)
            .map(|m| m.as_str().parse::<u32>().unwrap_or(100));
        pct.is_none_or(|p| p < 100).then(|| (*s, *l, t.clone()))
    })?;
    let finished_later = f.last_lines.iter().any(|(s, l, t)| {
        *s == source && *l > line && (t.contains("100%") || voc.shape(ShapeId::Done).is_match(t))
    });
    if finished_later {
        return None;
    }
    let phase = if text.contains("NCCL") {
        Phase::CommInit
    } else {
        f.milestones
            .iter()
            .rfind(|m| m.source == source && m.line <= line)
            .map_or(Phase::Unknown, |m| {
                if m.done {
                    successor(m.phase)
                } else {
                    m.phase
                }
            })
    };
    let message = format!(
        "the log ends here, mid-way: {}",
        text.trim().chars().take(300).collect::<String>()
    );
    let fl = Failure::without_incident(
        FailureClass::Hang,
        phase,
        "the log stops while this was in progress",
        source,
        line,
        message,
        "stopped-mid-way",
    );
    Some(fl)
}

/// Generated text stuck on one word (`text=' is is is is is is is is'`): a
/// model that repeats a single token is broken, not verbose. Only words (a
/// letter in them) count, so tensors of zeros and token-id lists do not.
pub(super) fn repeated_word_output(voc: &Vocabulary, msg: &str) -> bool {
    let ctx = voc.shape(ShapeId::OutputContext);
    if msg.len() < 24 || !ctx.is_match(msg) {
        return false;
    }
    let mut run = 0usize;
    let mut prev = "";
    for w in msg.split_whitespace() {
        let w = w.trim_matches(|c: char| !c.is_alphanumeric());
        if !w.is_empty() && w == prev && w.chars().any(char::is_alphabetic) {
            run += 1;
            if run >= 8 {
                return true;
            }
        } else {
            run = 1;
        }
        prev = w;
    }
    false
}

/// The script a letter belongs to, for the mixed-script test (kana counts with CJK, so that
/// Japanese reads as one script).
pub(super) fn script(c: char) -> Option<u8> {
    Some(match c as u32 {
        0x41..=0x5A | 0x61..=0x7A | 0xC0..=0x24F => 0,
        0x3040..=0x30FF | 0x3400..=0x4DBF | 0x4E00..=0x9FFF | 0xF900..=0xFAFF => 1,
        0xAC00..=0xD7AF | 0x1100..=0x11FF => 2,
        0x400..=0x4FF => 3,
        0x600..=0x6FF => 4,
        0xE00..=0xE7F => 5,
        0x900..=0x97F => 6,
        0x370..=0x3FF => 7,
        _ => return None,
    })
}

/// The stretches of a line that read as generated text: quoted strings (an unterminated
/// quote runs to the end of the line), and what follows an output word (`text=`,
/// `"content":`, `Output:`).
pub(super) fn generated_segments<'a>(voc: &Vocabulary, msg: &'a str) -> Vec<&'a str> {
    let mut out = Vec::new();
    if let Some(m) = voc.shape(ShapeId::OutputContext).find(msg) {
        out.push(&msg[m.end()..]);
    }
    let bytes = msg.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        let q = bytes[i];
        if q == b'"' || q == b'\'' {
            let start = i + 1;
            let end = msg[start..]
                .find(q as char)
                .map_or(msg.len(), |e| start + e);
            if end - start >= 24 {
                out.push(&msg[start..end]);
            }
            i = end + 1;
        } else {
            i += 1;
        }
    }
    out
}

/// Generated text that has degenerated: one word making up a third of a long stretch
/// (`prostitu prostitu 言えば prostitu ...`), a CJK character repeated four times in a row
/// (`爽爽爽爽`), or three scripts mixed in one stretch of text. Only stretches that read as
/// generated text count (see `generated_segments`), so tables and tensors do not.
pub(super) fn degenerate_text(voc: &Vocabulary, msg: &str) -> bool {
    if msg.len() < 24 {
        return false;
    }
    // Garbled tokens anywhere in the line: output that decodes into fragments of scripts.
    let tokens = msg.split_whitespace().count();
    let garbled = msg.split_whitespace().filter(|t| garbled_token(t)).count();
    if garbled >= 3 && garbled * 5 >= tokens {
        return true;
    }
    // Text of a language written without spaces is one long token: garbled with bytes that
    // decode to nothing (U+FFFD) fused to two scripts, one such token is enough.
    let long_garbled =
        |t: &str| t.chars().count() >= 12 && t.contains('\u{FFFD}') && garbled_token(t);
    if tokens <= 3 && msg.split_whitespace().any(long_garbled) {
        return true;
    }
    for seg in generated_segments(voc, msg) {
        let mut words: Vec<String> = Vec::new();
        let mut cur = String::new();
        let mut scripts = [false; 8];
        let mut cjk_run = (None::<char>, 0usize);
        for c in seg.chars() {
            if let Some(sc) = script(c) {
                scripts[sc as usize] = true;
            }
            if script(c) == Some(1) {
                if !cur.is_empty() {
                    words.push(std::mem::take(&mut cur).to_lowercase());
                }
                words.push(c.to_string());
                cjk_run = if cjk_run.0 == Some(c) {
                    (Some(c), cjk_run.1 + 1)
                } else {
                    (Some(c), 1)
                };
                if cjk_run.1 >= 4 {
                    return true;
                }
            } else if c.is_alphabetic() {
                cur.push(c);
                cjk_run = (None, 0);
            } else {
                if !cur.is_empty() {
                    words.push(std::mem::take(&mut cur).to_lowercase());
                }
                cjk_run = (None, 0);
            }
        }
        if !cur.is_empty() {
            words.push(cur.to_lowercase());
        }
        if scripts.iter().filter(|&&x| x).count() >= 3 && words.len() >= 8 {
            return true;
        }
        if phrase_loop(&words) {
            return true;
        }
        if punctuation_soup(seg, &words) || single_symbol_run(seg.trim(), 24) {
            return true;
        }
        let words: Vec<&String> = words
            .iter()
            .filter(|w| w.chars().count() >= 2 || w.chars().any(|c| script(c) == Some(1)))
            .filter(|w| !matches!(w.as_str(), "none" | "null" | "true" | "false" | "undefined"))
            .collect();
        if words.len() < 10 {
            continue;
        }
        let mut counts: HashMap<&str, usize> = HashMap::new();
        for w in &words {
            *counts.entry(w.as_str()).or_default() += 1;
        }
        let top = counts.values().copied().max().unwrap_or(0);
        if top >= 6 && top * 10 >= words.len() * 3 {
            return true;
        }
    }
    false
}

/// Outputs too short for the tests of a stretch of text, stuck all the same: two or more
/// lines whose generated text is one token ending in the same letter said over and over
/// (`output='qaaaaaaa'`, `output='taaaaaaa'`), a model that emits one token from some
/// step on. One line is enough when the run is long (twelve or more). Returns the first.
fn stuck_outputs<'a>(voc: &Vocabulary, f: &'a LogFacts) -> Option<&'a Record> {
    let ctx = voc.shape(ShapeId::OutputContext);
    // The letter a generated token ends in, said over and over, and how many times.
    let stuck_run = |m: &str| -> Option<(char, usize)> {
        let at = ctx.find(m)?;
        let rest = m[at.end()..].trim_start_matches(['=', ':', ' ', '"', '\'']);
        let token = rest.split(['"', '\'', ' ', ',', '}']).next().unwrap_or("");
        let chars: Vec<char> = token.chars().collect();
        let last = *chars.last()?;
        let run = chars.iter().rev().take_while(|&&c| c == last).count();
        // Most of the token, five times at least.
        (last.is_alphabetic() && run >= 5 && run * 5 >= chars.len() * 3).then_some((last, run))
    };
    // Outputs of several requests stuck on the same letter (the same token), or one long run;
    // a word stretched for effect (`Sooooo`, `Hmmmmm`) is neither.
    let mut seen: Vec<(char, &Record)> = Vec::new();
    for r in &f.records {
        let Some((letter, run)) = stuck_run(r.message()) else {
            continue;
        };
        if run >= 12 {
            return Some(r);
        }
        if let Some((_, first)) = seen.iter().find(|(l, _)| *l == letter) {
            return Some(first);
        }
        seen.push((letter, r));
    }
    None
}

/// Words that cycle: a phrase of two to six words said again and again back to back
/// (`a his across the a his across the a his across the`), covering most of the stretch.
/// A model that loops on a short cycle of tokens (a tokenizer of another vocabulary than the
/// weights', a broken sampler) writes this; prose repeats a phrase, not three times running.
pub(super) fn phrase_loop(words: &[String]) -> bool {
    if words.len() < 9 {
        return false;
    }
    for p in 2..=6usize {
        // The longest stretch where each word equals the one p words later, and where it ends.
        let (mut run, mut best, mut best_end) = (0usize, 0usize, 0usize);
        for i in 0..words.len() - p {
            if words[i] == words[i + p] {
                run += 1;
                if run > best {
                    (best, best_end) = (run, i + 1);
                }
            } else {
                run = 0;
            }
        }
        let covered = best + p;
        // Three full cycles at least, two thirds of the text, and a cycle of more than one
        // word (one word said over and over is `repeated_word_output`'s).
        if best >= 2 * p && covered >= 9 && covered * 3 >= words.len() * 2 {
            let cycle = &words[best_end - best..best_end - best + p];
            if cycle.iter().any(|w| w != &cycle[0]) {
                return true;
            }
        }
    }
    false
}

/// Text that is one letter, digit or CJK character repeated (`4444…`, `!!!` is left
/// to the punctuation test): a model stuck on one token. Rules (`====`, `----`, `####`)
/// and zero fill are not letters or are excluded.
pub(super) fn single_symbol_run(text: &str, min: usize) -> bool {
    let mut chars = text.chars();
    let Some(first) = chars.next() else {
        return false;
    };
    if !first.is_alphanumeric() || first == '0' {
        return false;
    }
    let mut n = 1;
    for c in chars {
        if c != first {
            return false;
        }
        n += 1;
    }
    n >= min
}

/// A token no language writes: three scripts run together (`kirIICom2ARNбуIIiamondII队员们`),
/// two scripts neither of which is Latin (Cyrillic fused to CJK), or a replacement character
/// (U+FFFD, bytes that decode to nothing) fused to letters of two scripts. Latin fused to CJK
/// alone is ordinary Chinese or Japanese prose (`使用Python进行`).
pub(super) fn garbled_token(tok: &str) -> bool {
    let mut scripts = [false; 8];
    let mut replacement = false;
    for c in tok.chars() {
        replacement |= c == '\u{FFFD}';
        if let Some(s) = script(c) {
            scripts[s as usize] = true;
        }
    }
    let n = scripts.iter().filter(|&&x| x).count();
    n >= 3 || (n == 2 && !scripts[0]) || (replacement && n >= 2)
}

/// Generated text that has fallen apart into punctuation and short function words
/// (`is,: to,,/ &.. by and.. a`): a third or more of its visible characters are punctuation
/// and its words average under three and a half letters. Prose averages over four, and
/// code or JSON has long identifiers.
pub(super) fn punctuation_soup(seg: &str, words: &[String]) -> bool {
    let visible = seg.chars().filter(|c| !c.is_whitespace()).count();
    let punct = seg
        .chars()
        .filter(|c| !c.is_whitespace() && !c.is_alphanumeric())
        .count();
    if visible < 40 || punct < 12 || words.len() < 8 || punct * 3 < visible {
        return false;
    }
    let letters: usize = words.iter().map(|w| w.chars().count()).sum();
    letters * 2 < words.len() * 7
}

/// A word of generated text that is a chat-template marker, whole or in pieces: a marker
/// word (`end`, `turn`, `im_`, data in `kb/vocab/shapes.toml`) glued to marker punctuation
/// (`<end_`, `end_of_turn_of_of_turn>`, `<|im_end|>`).
fn marker_fragment(voc: &Vocabulary, token: &str) -> bool {
    let punct = token.contains(['<', '>', '|']) || token.starts_with('_') || token.ends_with('_');
    punct && voc.shape(ShapeId::ChatMarker).is_match(token)
}

/// The reply to an interactive prompt (`>>> hi`, as ollama and llama.cpp's chat print it)
/// strewn with template markers: at least five, a tenth of its words. A reply is the lines
/// after a prompt line up to the next one. Logged prompts (`prompt: '<|im_start|>user ...'`)
/// are not replies, so they never count. Returns the first reply line holding a marker.
fn transcript_with_markers<'a>(
    voc: &Vocabulary,
    lines: &'a [(usize, u64, String)],
) -> Option<&'a (usize, u64, String)> {
    let is_prompt = |t: &str| t.trim_start().starts_with(">>> ");
    let mut i = 0;
    while i < lines.len() {
        if !is_prompt(&lines[i].2) {
            i += 1;
            continue;
        }
        let reply_end = (i + 1..lines.len())
            .find(|&j| is_prompt(&lines[j].2) || lines[j].0 != lines[i].0)
            .unwrap_or(lines.len());
        let reply = &lines[i + 1..reply_end];
        let words = reply.iter().flat_map(|(_, _, t)| t.split_whitespace());
        let (mut n, mut markers) = (0usize, 0usize);
        for w in words {
            n += 1;
            markers += usize::from(marker_fragment(voc, w));
        }
        if markers >= 5 && markers * 10 >= n {
            return reply
                .iter()
                .find(|(_, _, t)| t.split_whitespace().any(|w| marker_fragment(voc, w)));
        }
        i = reply_end;
    }
    None
}

/// When wrong output went wrong: generated text goes wrong while tokens are generated
/// (`decode`); the numbers of a forward pass over given tokens (a tensor or a pipeline's
/// scores full of NaN, a perplexity, the `forward-values` shape) went wrong in the prompt's
/// pass (`prefill`, as `docs/labels.md` counts an encoder's output or the prompt's logits).
fn wrong_output_phase(voc: &Vocabulary, message: &str) -> (Phase, &'static str) {
    if voc.shape(ShapeId::ForwardValues).is_match(message) {
        (
            Phase::Prefill,
            "the wrong values are a forward pass's numbers over given tokens, not generated text",
        )
    } else {
        (Phase::Decode, "output problems show while generating")
    }
}

pub(super) fn wrong_output_lines(voc: &Vocabulary, f: &LogFacts) -> Option<Failure> {
    let re = voc.shape(ShapeId::WrongOutput);
    // A run of Latin-1 letters is byte-level BPE leaking into text only with its
    // remapped control bytes (`Ċ` newline, `Ġ` space, U+0100-U+0143) among them.
    let bpe_leak = |m: &str| {
        m.chars()
            .filter(|c| ('\u{0100}'..='\u{0143}').contains(c))
            .count()
            >= 4
    };
    let rec = f
        .records
        .iter()
        .find(|r| {
            let m = r.message();
            re.find_iter(m).any(|x| {
                !x.as_str()
                    .chars()
                    .all(|c| ('\u{00A1}'..='\u{0143}').contains(&c))
                    || bpe_leak(x.as_str())
            }) || repeated_word_output(voc, m)
                || degenerate_text(voc, m)
        })
        .or_else(|| stuck_outputs(voc, f));
    let Some(rec) = rec else {
        // A transcript's last lines: an answer that is one symbol over and over
        // (`44444444…`) holds no word the scanner looks for.
        // A chat transcript's reply strewn with pieces of template markers.
        // The run may end where the user pressed Ctrl-C (`^C` and the next shell prompt
        // follow on the same line), and the transcript may go on to a run that worked.
        let one_symbol = |t: &str| {
            let before_interrupt = t.split("^C").next().unwrap_or(t);
            single_symbol_run(before_interrupt.trim(), 32)
        };
        let (source, line, text) = f
            .last_lines
            .iter()
            .chain(f.first_lines.iter())
            .find(|(_, _, t)| one_symbol(t))
            .or_else(|| transcript_with_markers(voc, &f.first_lines))
            .or_else(|| transcript_with_markers(voc, &f.last_lines))?;
        return Some(Failure::without_incident(
            FailureClass::WrongOutput,
            Phase::Decode,
            "output problems show while generating",
            *source,
            *line,
            quote(text),
            "wrong-output",
        ));
    };
    let (phase, reason) = wrong_output_phase(voc, rec.message());
    let mut fl = Failure::without_incident(
        FailureClass::WrongOutput,
        phase,
        reason,
        rec.source,
        rec.line,
        quote(rec.message()),
        "wrong-output",
    );
    fl.rank = rec.prefix.effective_rank();
    fl.ranks = fl.rank.into_iter().collect();
    fl.time = rec.prefix.time_text.clone();
    Some(fl)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn voc() -> &'static Vocabulary {
        Vocabulary::embedded()
    }

    #[test]
    fn outputs_stuck_on_one_letter_are_wrong_output() {
        let log = |outs: &[&str]| {
            let mut t = String::from("2026-12-06 08:22:48,047 INFO runner: model loaded\n");
            for (i, o) in outs.iter().enumerate() {
                t.push_str(&format!("2026-12-06 08:22:48,05{i} INFO runner: request req-{i} prompt='mnop' -> output='{o}'\n"));
            }
            t.push_str("exit code 0\n");
            facts_of(&t).failure.map(|f| (f.class, f.phase))
        };
        let want = Some((FailureClass::WrongOutput, Phase::Decode));
        assert_eq!(log(&["efghijkl", "qaaaaaaa", "taaaaaaa"]), want);
        // One short run alone, or runs that are words stretched for effect: nothing.
        assert_eq!(log(&["efghijkl", "qaaaaaaa"]), None);
        assert_eq!(log(&["Sooooo good", "Hmmmmm okay"]), None);
        assert_eq!(log(&["Sooooo", "Hmmmmm"]), None);
        assert_eq!(log(&["klmnopqr", "stuvwxyz"]), None);
        // One long run is enough.
        assert_eq!(log(&["xbbbbbbbbbbbbbbbb"]), want);
    }

    #[test]
    fn degenerate_generated_text_is_wrong_output() {
        let v = voc();
        assert!(degenerate_text(
            v,
            r#""content": "周恩 prostitu prostitu言えば_readablemue prostitu prostitu prostitu prostitu prostituouflageuhe prostitu言えば""#
        ));
        assert!(degenerate_text(
            v,
            "sglang server: 'Expossible! description! description!爽 ipairs soc!!爽爽爽爽'"
        ));
        assert!(degenerate_text(
            v,
            "Output: 'hello мир 世界 again hello мир 世界 again and more words'"
        ));
    }

    #[test]
    fn wrong_numbers_of_a_forward_pass_are_prefill_and_wrong_text_is_decode() {
        let v = voc();
        let ppl = "Final estimate: PPL = 1565.9828 +/- 87.11104";
        assert_eq!(wrong_output_phase(v, ppl).0, Phase::Prefill);
        let score = ">>> [{'score': nan, 'token': 3, 'token_str': '<unk>'}]";
        assert_eq!(wrong_output_phase(v, score).0, Phase::Prefill);
        let garbage = "generated text: 'tok4!!!!!!!!!!!!!!!!!!!!!!!'";
        assert_eq!(wrong_output_phase(v, garbage).0, Phase::Decode);
        let nan = "out = model(input_ids=inputs)\nprint(out[0])\n\
                   tensor([[[nan, nan, nan, nan, nan, nan, nan, nan, nan, nan],\n";
        let fl = crate::facts::facts_of(nan).failure.expect("a failure");
        assert_eq!(
            (fl.class, fl.phase),
            (FailureClass::WrongOutput, Phase::Prefill)
        );
        let text = "Prompt: Hello\nThe output is garbage: '!!!!!!!!!!!!!!!!!!!!!!!!'\n";
        let fl = crate::facts::facts_of(text).failure.expect("a failure");
        assert_eq!(
            (fl.class, fl.phase),
            (FailureClass::WrongOutput, Phase::Decode)
        );
    }

    #[test]
    fn one_symbol_repeated_until_ctrl_c_is_wrong_output() {
        let log = "flash attention on:\n\n$ lm Hello\n".to_string()
            + &"郦".repeat(60)
            + "^Cbash-5.1$ \n\nflash attention off:\n$ lm Hello\nHello! How can I help you today?\n";
        let f = crate::facts::facts_of(&log);
        let fl = f.failure.expect("a failure");
        assert_eq!(fl.class, FailureClass::WrongOutput);
        assert_eq!(fl.line, 4);
    }

    #[test]
    fn one_symbol_repeated_is_degenerate_and_rules_are_not() {
        assert!(single_symbol_run(&"4".repeat(40), 32));
        assert!(single_symbol_run(&"的".repeat(40), 32));
        assert!(!single_symbol_run(&"4".repeat(20), 32));
        assert!(!single_symbol_run(&"=".repeat(80), 32));
        assert!(!single_symbol_run(&"0".repeat(80), 32));
        assert!(!single_symbol_run(
            &"4".repeat(39).to_string().replace("44", "45"),
            32
        ));
        let v = voc();
        assert!(degenerate_text(v, &format!("Output: '{}'", "a".repeat(30))));
    }

    #[test]
    fn garbled_tokens_are_degenerate_and_mixed_prose_is_not() {
        let v = voc();
        // Raw output pasted after the command that produced it (no quotes, no `Output:`).
        assert!(degenerate_text(
            v,
            "To学霸照IIHOCI脾\u{FFFD}\u{FFFD}作出了以\u{FFFD}.QuadIIXloeII山坡 scarce\u{FFFD}тратплH devstat用量 Pro\u{FFFD}始 kirIICom2ARNбуIIiamondII队员们ière"
        ));
        for fine in [
            "我们使用Python进行推理, 模型是Qwen3, 在RTX4090上运行, 没有问题",
            "Загрузка модели Llama-3 завершена за 12 s on GPU 0",
            "ERROR: the file name ab\u{FFFD}cd.txt cannot be decoded",
        ] {
            assert!(!degenerate_text(v, fine), "{fine}");
        }
    }

    #[test]
    fn punctuation_soup_is_degenerate_and_code_is_not() {
        let soup = "[{'generated_text': 'DeepSpeed is,: to,,/ &.. by and.. a\\n.. and- and.. the,,\\n of\\n [.,.\\n:, &-. and a- the,\\n\\n). the'}]";
        assert!(degenerate_text(voc(), soup));
        for fine in [
            "[{'generated_text': 'DeepSpeed is a leading deep learning framework designed for distributed training and inference.'}]",
            "Output: {\"role\": \"assistant\", \"content\": \"The capital of France is Paris.\", \"tool_calls\": []}",
            "text='x = torch.zeros((batch_size, hidden_size), dtype=torch.float16, device=device)'",
        ] {
            assert!(!degenerate_text(voc(), fine), "{fine}");
        }
    }

    #[test]
    fn one_long_garbled_token_of_unspaced_text_is_degenerate() {
        let v = voc();
        assert!(degenerate_text(
            v,
            "\u{FFFD}2/定有了一个iSA诉快的队/纳厄/否化，4."
        ));
        // Ordinary Chinese with a Latin word is not, nor a short token with a lost byte.
        assert!(!degenerate_text(
            v,
            "我们使用Python进行数据分析和模型训练的工作。"
        ));
        assert!(!degenerate_text(
            v,
            "Error: \u{FFFD}\u{FFFD}ļ\u{FFFD} not found in the path"
        ));
    }

    fn numbered(text: &str) -> Vec<(usize, u64, String)> {
        text.lines()
            .enumerate()
            .map(|(i, l)| (0, i as u64 + 1, l.to_string()))
            .collect()
    }

    #[test]
    fn a_reply_strewn_with_template_markers_is_wrong_output() {
        let v = voc();
        let broken = numbered(
            ">>> hello\nHello<|im_end|> there\n<|im_start|>assistant\nHi<|im_end|>\n<|im_start|>assistant I am\n<|im_end|> <|im_start|>\n>>> /bye",
        );
        assert_eq!(transcript_with_markers(v, &broken).map(|l| l.1), Some(2));
        let pieces = numbered(">>> hi\nHi there <end_ doing\nend_of_turn_of_of_turn> I\n<start> end> <turn\nHow are you");
        assert!(transcript_with_markers(v, &pieces).is_some());
        // A healthy reply, HTML in a reply, and a logged prompt are not.
        for fine in [
            ">>> hi\nHello! How can I help you today?\n>>> /bye",
            ">>> write html\n<div class=\"a\"> <p>text</p> </div> <span id=\"b\"> <ul> <li>x</li> </ul>",
            "INFO Received request: prompt: '<|im_start|>system <|im_end|> <|im_start|>user hi <|im_end|> <|im_start|>assistant'",
        ] {
            assert!(transcript_with_markers(v, &numbered(fine)).is_none(), "{fine}");
        }
    }

    #[test]
    fn a_short_phrase_said_over_and_over_is_degenerate() {
        let v = voc();
        assert!(degenerate_text(
            v,
            "request 0 finished: completion_tokens=12 text='a his across the a his across the a his across the'"
        ));
        assert!(degenerate_text(
            v,
            r#""content": "I am sorry, I am sorry, I am sorry, I am sorry, I am sorry""#
        ));
        // A phrase said twice, a refrain inside prose, a list of distinct items: not a loop.
        for fine in [
            "text='the cat sat on the mat and the cat sat on the rug by the door'",
            r#""content": "Row, row, row your boat, gently down the stream. Merrily, merrily, merrily, merrily, life is but a dream.""#,
            "text='first we load, then we warm up, then we serve, then we wait for the next request'",
        ] {
            assert!(!degenerate_text(v, fine), "{fine}");
        }
    }

    #[test]
    fn ordinary_text_is_not_degenerate() {
        let v = voc();
        assert!(!degenerate_text(
            v,
            r#""content": "The capital of France is Paris. It is known for the Eiffel Tower and the Louvre.""#
        ));
        assert!(!degenerate_text(
            v,
            "[None, None, None, None, None, None, None, None, None, None, None, None]"
        ));
        assert!(!degenerate_text(
            v,
            r#"text="日本語のテキストです。これは普通の文章で、English words も少し入っています。""#
        ));
    }
}
