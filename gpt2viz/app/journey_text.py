"""The journey's words: a title and a few sentences per page, in the current language, around core's numbers.

``page_title(page)`` and ``page_text(page, numbers)`` are plain functions over
:func:`gpt2viz.core.viewmodels.journey.journey_page`'s numbers, so anything that has those numbers (the app's
journey panel, the PDF report) words them the same way. Every sentence goes through
``translate("Journey", ...)`` with named placeholders; numbers are formatted identically in every language.
"""

from __future__ import annotations

from PySide6.QtCore import QCoreApplication

from gpt2viz.core.viewmodels.journey import PAGES
from gpt2viz.core.generation.sampling import top_k_text

# lupdate finds calls spelled translate("Context", "text"): keep that spelling at every call.
translate = QCoreApplication.translate


def _q(text: str) -> str:
    return translate("Journey", "“{token}”").format(token=text)


def _join(items) -> str:
    return translate("Journey", ", ").join(items)


def page_title(page: str) -> str:
    """The title of journey page ``page`` (a key of :data:`gpt2viz.core.viewmodels.journey.PAGES`), without a number.

    Unnumbered so that whoever lists the pages numbers them once: the journey panel by the page's place
    in the journey (:func:`page_heading`), the report by its own section order.
    """
    titles = {
        "text": translate("Journey", "The text you typed"),
        "tokens": translate("Journey", "Cutting the text into tokens"),
        "embedding": translate("Journey", "From an id to a vector: the token embedding"),
        "position": translate("Journey", "Where it stands: the position embedding"),
        "attention": translate("Journey", "Attention: reading the earlier tokens"),
        "mlp": translate("Journey", "The MLP: a memory that writes"),
        "residual": translate("Journey", "The residual stream adds it all up"),
        "blocks": translate("Journey", "Block after block: when does the answer appear?"),
        "lm_head": translate("Journey", "The LM head and softmax: scores for every token"),
        "choose": translate("Journey", "Choosing the next token"),
        "kv_cache": translate("Journey", "Appending it, and the KV cache"),
        "circuit": translate("Journey", "The circuit behind the answer"),
        "next": translate("Journey", "The next round"),
    }
    return titles[page]


def page_heading(page: str) -> str:
    """The journey panel's heading of ``page``: its number in the journey and its title ("3. From an id ...")."""
    return translate("Journey", "{number}. {title}").format(number=PAGES.index(page) + 1, title=page_title(page))


def page_text(page: str, n: dict) -> str:
    """The sentences of journey page ``page`` with its numbers ``n`` (plain text; paragraphs split by blank lines)."""
    if page == "text":
        return translate("Journey", "The model is given {text}: {n_chars} characters, {n_bytes} bytes of UTF-8. It "
                         "never sees letters. Everything that follows is arithmetic on numbers made from these "
                         "bytes, and no single number in the model stores the answer: the answer is where a long "
                         "path of additions and multiplications ends.").format(
            text=_q(n["text"]), n_chars=n["n_chars"], n_bytes=n["n_bytes"])
    if page == "tokens":
        pieces = "|".join(d for _, d in n["word_pieces"])
        spaced = "|".join(d for _, d in n["spaced_pieces"])
        rows = _join(translate("Journey", "{token} = {id}").format(token=d, id=i) for _, i, d, _ in n["rows"][:8])
        text = translate("Journey", "Byte-pair encoding cut the {n_bytes} bytes into {n_tokens} tokens, each an id "
                         "in a fixed vocabulary: {rows}. A leading space belongs to the token that follows it "
                         "(shown as ␣; {n_space} of these tokens start with one): {word} becomes {n_pieces} pieces "
                         "{pieces}, while {spaced_word} is the single token {spaced}. The model can read at most "
                         "{n_positions} tokens.").format(
            n_bytes=n["n_bytes"], n_tokens=n["n_tokens"], rows=rows, n_space=n["n_leading_space"],
            word=_q(n["word"]), n_pieces=len(n["word_pieces"]), pieces=pieces, spaced_word=_q("␣" + n["word"]),
            spaced=spaced, n_positions=n["n_positions"])
        if n["n_partial"]:
            text += "\n\n" + translate("Journey", "{n} tokens hold only part of a character: byte-level BPE splits "
                                       "a Chinese character's three UTF-8 bytes wherever its vocabulary has no "
                                       "whole piece.").format(n=n["n_partial"])
        return text
    if page == "embedding":
        near = _join(translate("Journey", "{token} ({cos:.3f})").format(token=d, cos=c) for _, d, c in n["nearest"])
        text = translate("Journey", "The id of {token} picks one row of a {vocab:,} × {n_embd} table: {n_embd} "
                         "learned numbers (norm {norm:.2f}). Nothing in the id means anything; the row does. Its "
                         "nearest rows by cosine are {near}.").format(
            token=_q(n["token_text"]), vocab=n["vocab_size"], n_embd=n["n_embd"], norm=n["token_norm"], near=near)
        a, b, c = n["analogy_words"]
        if n["analogy"]:
            res = _join(translate("Journey", "{token} ({cos:.3f})").format(token=d, cos=v) for _, d, v in n["analogy"])
            text += "\n\n" + translate("Journey", "Directions in this space carry meaning: {a} − {b} + {c} lands "
                                       "nearest to {result} (try your own words in the analogy box).").format(
                a=_q(a), b=_q(b), c=_q(c), result=res)
        return text
    if page == "position":
        return translate("Journey", "Order matters (“France’s capital” is not “capital’s France”), yet the token "
                         "vector does not know where it stands. A second table, one row for each of the "
                         "{n_positions} positions, adds where: position {position} adds a vector of norm "
                         "{pos_norm:.2f} to {token}’s {token_norm:.2f}. Their sum, norm {sum_norm:.2f}, is the "
                         "residual stream that enters block 0.").format(
            n_positions=n["n_positions"], position=n["position"], pos_norm=n["pos_norm"], token=_q(n["token_text"]),
            token_norm=n["token_norm"], sum_norm=n["sum_norm"])
    if page == "attention":
        keys = _join(translate("Journey", "{token} at position {pos} ({weight:.0%})").format(token=d, pos=p, weight=w)
                     for p, d, w in n["keys"])
        return translate("Journey", "In each block, {n_head} attention heads let every token read the tokens "
                         "before it. Each token makes a query (what it looks for), a key (what it offers) and a value "
                         "(what it passes on); a query’s dot products with the keys, through softmax, become weights "
                         "that sum to 1. Here, in block {layer}, head {head} of {token} (position {position}) puts "
                         "its weight on {keys} (entropy {entropy:.2f} nats). Attention moves information between "
                         "positions; it does not yet say the answer.").format(
            n_head=n["n_head"], layer=n["layer"], head=n["head"], token=_q(n["token_text"]), position=n["position"],
            keys=keys, entropy=n["entropy"])
    if page == "mlp":
        top = _join(translate("Journey", "#{neuron} ({act:+.2f})").format(neuron=i, act=a) for i, a, _ in n["top"])
        writes = _join(translate("Journey", "{token} ({value:+.2f})").format(token=d, value=v)
                       for d, v in n["neuron_promotes"])
        return translate("Journey", "After attention, the MLP of block {layer} works like a memory of {d_mlp:,} "
                         "entries. Each neuron’s input weights are a key: it fires when the residual matches a "
                         "pattern. Its output weights are a value: what it writes back when it fires. For {token}, "
                         "{n_active} neurons fire; the biggest writers are {top}. Neuron #{neuron}, read through the "
                         "unembedding, writes towards {writes}; the MLP as a whole promotes {promotes}.").format(
            layer=n["layer"], d_mlp=n["d_mlp"], token=_q(n["token_text"]), n_active=n["n_active"], top=top,
            neuron=n["neuron"], writes=writes, promotes=_join(n["promotes"])) + _features_text(n)
    if page == "residual":
        return translate("Journey", "Attention and the MLP never replace the vector: each adds its output to it "
                         "(a residual connection). The sum, the residual stream, grows from norm {start:.2f} to "
                         "{end:.2f} over {n_layer} blocks; the largest attention write is in block {attn_layer} "
                         "({attn:.2f}), the largest MLP write in block {mlp_layer} ({mlp:.2f}). Its direction "
                         "settles early: cosine to the final residual {cos0:.2f} at the start, {cos_mid:.2f} "
                         "half-way. Each block has a layer normalization before its attention and before its "
                         "MLP: they read a normalised copy, the stream itself is only added to.").format(
            start=n["norm_start"], end=n["norm_end"], n_layer=n["n_layer"], attn_layer=n["attn_max_layer"],
            attn=n["attn_max"], mlp_layer=n["mlp_max_layer"], mlp=n["mlp_max"], cos0=n["cos_start"],
            cos_mid=n["cos_mid"])
    if page == "blocks":
        probs = _join(f"{p:.0%}" for p in n["probs"])
        if n["stays_top"] is None:
            when = translate("Journey", "it is the lens’s top token only at the very end")
        elif n["stays_top"] == 0:
            when = translate("Journey", "it is already the top token straight after the embeddings")
        else:
            when = translate("Journey", "it becomes the top token after block {layer} and stays there").format(
                layer=n["stays_top"] - 1)
        return translate("Journey", "The logit lens reads the residual after every block as if the model stopped "
                         "there (final layer normalization and unembedding applied early). For the model’s answer "
                         "{target}, the probability by depth is {probs}: {when}. The {n_layer} blocks do not look the "
                         "answer up in one place; they push the vector towards it a little at a time.").format(
            target=_q(n["target_text"]), probs=probs, when=when, n_layer=n["n_layer"])
    if page == "lm_head":
        top = _join(translate("Journey", "{token}: logit {logit:.2f} → {prob:.1%}").format(token=d, logit=lg, prob=p)
                    for d, lg, p in n["top"])
        return translate("Journey", "After a final layer normalization, the LM head multiplies the last position’s "
                         "{n_embd} numbers by the embedding table again (the weights are shared) and gets one score, "
                         "a logit, for each of the {vocab:,} tokens. Only the last position has seen the whole text, "
                         "so only it chooses. Softmax turns the logits into probabilities that sum to 1: {top}. "
                         "Entropy {entropy:.2f} nats (0 = certain, {max_entropy:.1f} = no idea).").format(
            n_embd=n["n_embd"], vocab=n["vocab_size"], top=top, entropy=n["entropy"], max_entropy=n["max_entropy"])
    if page == "choose":
        if n["greedy"]:
            rule = translate("Journey", "temperature 0 is greedy decoding: always the most likely token")
        else:
            rule = translate("Journey", "temperature {t:.2f} (below 1 sharpens, above 1 flattens), top-k {k} (keep "
                             "the k most likely), top-p {p:.2f} (keep the smallest set whose probabilities reach p), "
                             "seed {seed}").format(
                t=n["temperature"], k=top_k_text(n["top_k"], translate("Journey", "off")), p=n["top_p"], seed=n["seed"])
        text = translate("Journey", "The probabilities are not the choice yet. The settings say how to draw: {rule}. "
                         "{kept:,} of {vocab:,} tokens remain; the next step takes {token}").format(
            rule=rule, kept=n["n_kept"], vocab=n["vocab_size"], token=_q(n["chosen_text"]))
        if n["p_final"] is not None:
            text += translate("Journey", " ({final:.1%} after the settings, {raw:.1%} as the model gave it)").format(
                final=n["p_final"], raw=n["p_raw"])
        return text + translate("Journey", ". Move the sliders of the next-token chart: this page and the chart "
                                "follow at once, without running the model again.")
    if page == "kv_cache":
        return translate("Journey", "The chosen token is appended and the whole path runs again, but only for that "
                         "one new token: the keys and values of the earlier tokens are kept, the KV cache. It costs "
                         "{per_token:.0f} KB per token ({n_layer} layers × keys and values × {n_embd} numbers × 4 "
                         "bytes): {now:.2f} MB for these {n_tokens} tokens, {full:.1f} MB at the full context of "
                         "{n_positions}. Memory grows with the text; that is why long contexts are expensive.").format(
            per_token=n["per_token_kb"], n_layer=n["n_layer"], n_embd=n["n_embd"], now=n["now_mb"],
            n_tokens=n["n_tokens"], full=n["full_mb"], n_positions=n["n_positions"])
    if page == "circuit":
        return _circuit_text(n)
    if page == "next":
        return translate("Journey", "With {token} appended, the text is {n_tokens} tokens long and position "
                         "{position} becomes the newest: the journey starts again from its embedding, and so on, "
                         "token by token, until the context of {n_positions} is full or you stop. Press Step (Space) "
                         "to take this step, then walk the journey again on the new text.").format(
            token=_q(n["chosen_text"]), n_tokens=n["n_tokens"], position=n["new_position"],
            n_positions=n["n_positions"]) + "\n\n" + translate(
            "Journey", "Since the answer is the end of a path of numbers, it can be changed by changing a few of "
            "them: Edit this fact… below makes {subject} continue with {target} after {prompt} by a rank-one change "
            "of one MLP's output weight (ROME). The chart's ghosts, the causal trace and the Path view then show the "
            "model before and after the edit.").format(
            subject=_q(n["edit_subject"]), target=_q(n["edit_target"]), prompt=_q(n["edit_prompt"]))
    raise KeyError(page)


def _features_text(n: dict) -> str:
    """The journey's MLP page, continued when the model has an SAE at that block: neurons are polysemantic,
    features are the units a reader can name."""
    if not n.get("features"):
        return ""
    items = _join(translate("Journey", "#{feature} {label} ({value:.2f})").format(feature=f, label=label or "—",
                                                                               value=a) for f, a, label in n["features"])
    return " " + translate("Journey", "One neuron rarely means one thing. A sparse autoencoder reads the same block’s "
                           "input as a few of thousands of features instead, each with a meaning one can look up: "
                           "here the strongest are {items}. Each label gives the tokens a feature fires on, then the "
                           "token it pushes towards (Features tab).").format(items=items)


def _circuit_text(n: dict) -> str:
    """The circuit page: what an attribution graph is, and the graph of this prompt when it has been built."""
    intro = translate("Journey", "The pages so far followed one token's vector. An attribution graph follows the "
                      "answer instead: each block's MLP is replaced by a transcoder, a sparse stand-in whose features "
                      "can be read, and every link between the prompt's tokens, those features and the answer's logit "
                      "is a direct effect through the frozen attention and residual stream. Only the links that "
                      "carry most of the answer are kept.")
    if not n["has_transcoders"]:
        return intro + "\n\n" + translate("Journey", "This model folder ships no transcoders, so its graph cannot be "
                                           "built here (train them with gpt2viz train-sae --transcoder).")
    if not n["built"]:
        return intro + "\n\n" + translate("Journey", "Build the circuit graph below (or Analysis → Circuit graph): "
                                           "this page will then say what carries the answer.")
    parts = []
    for kind, layer, index, text, w in n["inputs"]:
        if kind == "feature":
            parts.append(translate("Journey", "block {layer} feature {feature} ({label}, {weight:+.2f})").format(
                layer=layer, feature=index, label=text or "—", weight=w))
        elif kind == "error":
            parts.append(translate("Journey", "what block {layer}'s transcoder misses ({weight:+.2f})").format(
                layer=layer, weight=w))
        else:
            parts.append(translate("Journey", "the token {token} itself ({weight:+.2f})").format(
                token=_q(text), weight=w))
    return intro + "\n\n" + translate(
        "Journey", "For this prompt the graph keeps {nodes} nodes and {links} links; the transcoders account for "
        "{replacement:.0%} of the answer's path (replacement score) and {completeness:.0%} of each node's inputs "
        "(completeness). The strongest direct inputs to {target} are {inputs}. In the Circuit graph tab, hover a "
        "node for its numbers, double-click a feature for its page, or ablate pinned nodes to check the graph "
        "against the model.").format(
        nodes=n["n_nodes"], links=n["n_links"], replacement=n["replacement"] or 0.0,
        completeness=n["completeness"] or 0.0, target=_q(n["target_text"]), inputs=_join(parts))
