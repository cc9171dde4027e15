"""A tiny llama-architecture GGUF model with random weights, written by the tests themselves (nothing is
downloaded): 2 layers, width 64, a byte-fallback SentencePiece vocabulary of a few hundred pieces (the
control tokens, the 256 byte tokens, printable ASCII and the words the games' prompts use most) and a chat
template in its metadata. Under 1 MB; written in well under a second. It plays randomly, which is all the
tests need: constrained output makes it legal, unconstrained output exercises the retry and forfeit paths.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np

CHAT_TEMPLATE = (
    "{{ bos_token }}{% for message in messages %}<|{{ message['role'] }}|>\n{{ message['content'] }}\n"
    "{% endfor %}{% if add_generation_prompt %}<|assistant|>\n{% endif %}"
)
WIDTH, LAYERS, HEADS, FF, CONTEXT = 64, 2, 4, 128, 16384


def _words() -> list[str]:
    """Words for pieces: those of the rules briefs and the action names (so prompts tokenize shorter)."""
    from tavernzoo.agents.text_views import rules_brief
    from tavernzoo.envs import games

    text = " ".join(rules_brief(game, game.make_config()) for game in games().values())
    for game in games().values():
        text += " " + " ".join(game.action_names(game.make_config()))
    counts: dict[str, int] = {}
    for word in re.findall(r"[A-Za-z_]{2,12}", text):
        counts[word] = counts.get(word, 0) + 1
    return [word for word, _ in sorted(counts.items(), key=lambda item: (-item[1], item[0]))][:200]


def write_tiny_gguf(path: str | Path, seed: int = 0) -> Path:
    import gguf

    rng = np.random.default_rng(seed)
    tokens: list[str] = ["<unk>", "<s>", "</s>"]
    types = [gguf.TokenType.UNKNOWN, gguf.TokenType.CONTROL, gguf.TokenType.CONTROL]
    for byte in range(256):
        tokens.append(f"<0x{byte:02X}>")
        types.append(gguf.TokenType.BYTE)
    pieces = ["\u2581"] + [chr(c) for c in range(33, 127)]
    # SentencePiece merges two adjacent pieces only into a piece of the vocabulary: every prefix of a
    # word's piece is a piece too, so that the whole word can be reached (and prompts are ~3x shorter).
    for word in _words():
        piece = f"\u2581{word}"
        pieces += [piece[:end] for end in range(2, len(piece) + 1)]
    for piece in dict.fromkeys(pieces):
        tokens.append(piece)
        types.append(gguf.TokenType.NORMAL)
    scores = [0.0] * 259 + [float(len(piece)) for piece in tokens[259:]]  # longer pieces merge first
    vocab = len(tokens)

    path = Path(path)
    writer = gguf.GGUFWriter(str(path), "llama")
    writer.add_name("tavernzoo-tiny-test")
    writer.add_context_length(CONTEXT)
    writer.add_embedding_length(WIDTH)
    writer.add_block_count(LAYERS)
    writer.add_feed_forward_length(FF)
    writer.add_head_count(HEADS)
    writer.add_head_count_kv(HEADS)
    writer.add_rope_dimension_count(WIDTH // HEADS)
    writer.add_layer_norm_rms_eps(1e-5)
    writer.add_file_type(gguf.LlamaFileType.MOSTLY_F16)
    writer.add_tokenizer_model("llama")
    writer.add_token_list(tokens)
    writer.add_token_scores(scores)
    writer.add_token_types(types)
    writer.add_unk_token_id(0)
    writer.add_bos_token_id(1)
    writer.add_eos_token_id(2)
    writer.add_add_bos_token(True)
    writer.add_add_eos_token(False)
    writer.add_chat_template(CHAT_TEMPLATE)

    def weights(*shape: int) -> np.ndarray:
        return (rng.standard_normal(shape) * 0.05).astype(np.float32)

    # numpy shapes are the reverse of GGUF's (ne0 first): token_embd is ne {WIDTH, vocab}.
    # The two vocabulary-sized matrices in float16 keep the file under 1 MB.
    writer.add_tensor("token_embd.weight", weights(vocab, WIDTH).astype(np.float16))
    writer.add_tensor("output_norm.weight", np.ones(WIDTH, dtype=np.float32))
    writer.add_tensor("output.weight", weights(vocab, WIDTH).astype(np.float16))
    for layer in range(LAYERS):
        prefix = f"blk.{layer}."
        writer.add_tensor(prefix + "attn_norm.weight", np.ones(WIDTH, dtype=np.float32))
        for name in ("attn_q", "attn_k", "attn_v", "attn_output"):
            writer.add_tensor(prefix + name + ".weight", weights(WIDTH, WIDTH))
        writer.add_tensor(prefix + "ffn_norm.weight", np.ones(WIDTH, dtype=np.float32))
        writer.add_tensor(prefix + "ffn_gate.weight", weights(FF, WIDTH))
        writer.add_tensor(prefix + "ffn_up.weight", weights(FF, WIDTH))
        writer.add_tensor(prefix + "ffn_down.weight", weights(WIDTH, FF))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return path
