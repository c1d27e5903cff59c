"""Shared helpers of the LLM bridges of mvlearn_ext.deep (TRL, PEFT, transformers).

Each bridge imports TRL, PEFT or transformers through :func:`require_llm`,
so that a missing package raises one ``ImportError`` naming the ``llm``
extra. Nothing imports these bridges unless asked: ``import mvlearn_ext.deep``
does not.
"""

from __future__ import annotations

from mvlearn_ext.utils._optional import import_optional

__all__ = ["completion_texts", "require_llm", "tiny_causal_lm"]


def require_llm(*names, feature):
    """Import each of ``names`` (``"trl"``, ``"peft"``, ``"transformers"``) or raise."""
    mods = tuple(import_optional(name, feature=feature) for name in names)
    return mods[0] if len(mods) == 1 else mods


def completion_texts(completions):
    """The text of each completion: TRL passes strings, or chat turns (lists of messages).

    A conversational completion is a list of ``{"role", "content"}`` dicts;
    its text is the content of its last message.
    """
    if isinstance(completions, str):
        raise TypeError("completions must be a list of completions, not a single string")
    out = []
    for n, c in enumerate(completions):
        if isinstance(c, str):
            out.append(c)
        elif isinstance(c, (list, tuple)) and c and isinstance(c[-1], dict):
            content = c[-1].get("content", "")
            if isinstance(content, list):  # multimodal parts: keep the text ones
                content = "".join(p.get("text", "") for p in content if isinstance(p, dict))
            out.append(str(content))
        else:
            raise TypeError(
                f"completions[{n}] must be a string or a list of chat messages, "
                f"got {type(c).__name__}"
            )
    return out


def tiny_causal_lm(words, *, hidden_size=32, n_layers=2, n_heads=2, random_state=0):
    """A random-weight causal LM and a word-level tokenizer, built here (no download).

    For tests, examples and the user guide: a ``transformers`` Llama-style
    model from a config (``LlamaForCausalLM``) and a
    ``PreTrainedTokenizerFast`` whose vocabulary is ``words`` plus the
    special tokens ``<pad>``, ``<unk>``, ``<bos>``, ``<eos>``; text is split
    on whitespace.

    Parameters
    ----------
    words : list of str
        The vocabulary (distinct, no whitespace).
    hidden_size, n_layers, n_heads : int
    random_state : int, default=0
        Seeds the weights (``torch.manual_seed``, then restores the global state).

    Returns
    -------
    model : transformers.LlamaForCausalLM
    tokenizer : transformers.PreTrainedTokenizerFast

    See Also
    --------
    MVGRPOTrainer : A trainer to try it with.

    Examples
    --------
    >>> from mvlearn_ext.deep.rl_trl import tiny_causal_lm
    >>> model, tokenizer = tiny_causal_lm(["a", "b", "c"])
    >>> tokenizer("a b c")["input_ids"][-3:]
    [...]
    """
    transformers = require_llm("transformers", feature="tiny_causal_lm")
    import tokenizers
    import torch

    words = list(words)
    if len(set(words)) != len(words) or any(not w or any(c.isspace() for c in w) for w in words):
        raise ValueError("words must be distinct non-empty strings without whitespace")
    special = ["<pad>", "<unk>", "<bos>", "<eos>"]
    clash = set(words) & set(special)
    if clash:
        raise ValueError(f"words must not contain the special tokens {sorted(clash)}")
    vocab = {w: i for i, w in enumerate(special + words)}
    core = tokenizers.Tokenizer(tokenizers.models.WordLevel(vocab, unk_token="<unk>"))
    core.pre_tokenizer = tokenizers.pre_tokenizers.WhitespaceSplit()
    tokenizer = transformers.PreTrainedTokenizerFast(
        tokenizer_object=core,
        pad_token="<pad>",
        unk_token="<unk>",
        bos_token="<bos>",
        eos_token="<eos>",
    )
    config = transformers.LlamaConfig(
        vocab_size=len(vocab),
        hidden_size=hidden_size,
        intermediate_size=2 * hidden_size,
        num_hidden_layers=n_layers,
        num_attention_heads=n_heads,
        num_key_value_heads=n_heads,
        max_position_embeddings=64,
        pad_token_id=vocab["<pad>"],
        bos_token_id=vocab["<bos>"],
        eos_token_id=vocab["<eos>"],
        tie_word_embeddings=True,
    )
    state = torch.random.get_rng_state()
    try:
        torch.manual_seed(random_state)
        model = transformers.LlamaForCausalLM(config)
    finally:
        torch.random.set_rng_state(state)
    return model, tokenizer
