<?xml version="1.0" encoding="utf-8"?>
<!DOCTYPE TS>
<TS version="2.1" language="zh_CN">
<context>
    <name>AttentionView</name>
    <message>
        <source>pattern (after softmax)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>scores (before softmax)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>hover a cell for its exact value</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>weight</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>head {head}</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Run a prompt to see attention.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>head {head} · entropy at position {pos}: {entropy:.2f} nats · click to enlarge</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>head {head} · {entropy:.2f} nats</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>pattern</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>scores</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>layer {layer}, head {head}: {what} (rows read, columns are read)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>what {token} (position {pos}) reads, head {head}</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source> Showing the newest {n} of {total} positions.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Layer {layer}: each small map is one head&apos;s attention, query (row) × key (column); grey cells are the future, masked. Click a head to enlarge it. Entropy at position {pos} (nats; 0 = one token gets everything): {entropies}.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>masked (future)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>query {q} {q_token} → key {k} {k_token}: {value}</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>DetailTabs</name>
    <message>
        <source>Tokens</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Embeddings</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Attention</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>MLP</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Logit lens</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Residual</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Path</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>EmbeddingsView</name>
    <message>
        <source>token</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>position</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>sum</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>dimension</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&lt;b&gt;Analogy&lt;/b&gt; over the embedding matrix: nearest tokens to a − b + c</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Type three words (a leading space makes the usual word-initial token).</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Run a prompt to see its embeddings.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Position {pos}, {token} (id {id}): token vector ‖{ne:.2f}‖ + position vector ‖{npos:.2f}‖ = ‖{ns:.2f}‖, the residual stream entering block 0 ({n} numbers; blue negative, red positive).</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&lt;b&gt;Nearest tokens&lt;/b&gt; to {token} (cosine):</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>“{text}” is {n} tokens; each term must be one token.</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>LensView</name>
    <message>
        <source>target token (default: the token the model chose next)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>depth (0 = embeddings, then after each block)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>probability</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Run a prompt to see the logit lens.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>embed</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>block {layer}</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>after the embeddings</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>after block {layer}</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>{where}, position {pos} predicts {token} ({prob:.1%})</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source> Showing the newest {n} of {total} positions.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Each cell: the token the residual stream would predict if the model stopped after that block (final LayerNorm + unembedding applied early), and its probability. The last row is the model&apos;s real output. Click a column to select that position.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>{target} at position {pos} {token}</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>rank by depth (0 = top): {ranks}</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source> · “{text}” is {n} tokens; using the default</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>MainWindow</name>
    <message>
        <source>gpt2viz — the life of a token in GPT-2</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Type a prompt, then Run (Ctrl+Enter)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Model</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Prompt</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Tokens — click one to follow that position; generated tokens are green</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Pipeline — the path the selected token travels; click a stage</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Running…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Run</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&amp;Model</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&amp;Export</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&amp;Language</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&amp;Open model folder…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&amp;Get GPT-2…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&amp;Quit</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Export &amp;view as PNG or SVG…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Export &amp;all layers…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Export &amp;data (every hook, .npz + .json)…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>No font for Chinese characters was found: CJK text and tokens will show as boxes. Install a CJK font (Debian/Ubuntu: fonts-noto-cjk).</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Export {view} as PNG or SVG…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Export all layers…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Export data (.npz)…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>No model is loaded: open a model folder from the Model menu.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Open a gpt2viz model folder</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Run a prompt first: there is nothing to export yet.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Export {view}</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>PNG image (*.png);;SVG drawing (*.svg)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>saved {path}</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Export every layer of {view} into…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Replace files?</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>{folder} already holds {n} exported files; replace those with the same names?</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Exporting {n} layers of {view}…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Cancel</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>saved {n} images, a contact sheet and index.json in {folder}</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Export data</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>NumPy archive (*.npz)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>saved {npz} and {json}</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>no model</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>{name} · {params:.1f}M params · {n_layer} layers × {n_head} heads · context {used}/{n_positions} · KV cache {kv:.2f} MB · last step {ms:.1f} ms</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source> · running…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Exporting GPT-2 (124M): download, ONNX export, validation…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Get GPT-2</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>the export failed</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Could not get GPT-2: {error}

Without network: download &apos;openai-community/gpt2&apos; (config.json, model.safetensors, tokenizer.json) on another machine, then run `gpt2viz export &lt;that folder&gt; --out {out}`. The export needs `pip install &apos;gpt2viz[export]&apos;`.</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>MlpView</name>
    <message>
        <source>neuron</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>activation (after GELU)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>activation</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>× ‖value‖</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Run a prompt to see the MLP neurons.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Layer {layer}, position {pos} {token}: {n:,} neurons, {active} above {threshold}. Each neuron is a key (its input weights decide when it fires) and a value (its output weights: what it adds to the residual). Orange: the biggest writers. Click one to read its value as tokens.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&lt;b&gt;The whole MLP output&lt;/b&gt; through the unembedding promotes {promotes}; suppresses {suppresses}</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&lt;b&gt;Neuron {neuron}&lt;/b&gt; of layer {layer}: its value vector W_out[{neuron}] · W_U&lt;br&gt;promotes: {promotes}&lt;br&gt;suppresses: {suppresses}</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>PathView</name>
    <message>
        <source>target token (default: the next token)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>vs token (optional: a logit difference)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>threshold</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Edges are DLA-weighted (not LLM-TT&apos;s vector shares): signed, blue pushed and red pulled down, and before pruning they add up to the logit; only direct paths into this position are edges. Attribution freezes the final LayerNorm&apos;s scale at the real residual; the logit lens recomputes it at every depth, so their numbers differ.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>hover an edge or a node for its numbers; click an edge to open its head, a node to see the logit lens there</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>depth</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>direct contribution</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>{0:.1f} % of total</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Run a prompt to see which parts of the model pushed the next token.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Direct logit attribution of {what} at position {pos}: logit {logit:.3f} = the parts + final LayerNorm bias {bias:+.3f}. {dropped} parts at or under the threshold are hidden (the kept ones are {kept:.0%} of the total |contribution|; widths renormalised). Largest source: {head}.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>embed</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>how {0} got its logit: layers × positions (depth n = after block n−1)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>what pushed {0} (and what pulled it down)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source> reading {0} (position {1})</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>{label}{src}: {value:+.4f} to {target} ({share:.0%} of the kept edges)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>after the embeddings</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>after block {0}</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>after block {0}&apos;s attention</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>{0} (position {1}) {2}</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>: the parts so far add {0:+.4f}</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source> · lens there predicts {0} ({1:.1%})</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>PipelineView</name>
    <message>
        <source>◀ Previous stage</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Next stage ▶</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The pipeline shows every stage a token passes through. Run a prompt, then click a stage or walk through them with Previous / Next.</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>ProbabilityChart</name>
    <message>
        <source>probability</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>ghost bar = model&apos;s own probability · solid = after settings · struck out = cut by top-k/top-p · ★ = what Step picks · click a bar to force it</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Temperature</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Top-k</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Top-p</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Seed</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>0 (greedy)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>off</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>off (1.0)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Next token</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>  (model {raw:.1%})</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Next token after position {position} · {kept:,} of {vocab:,} tokens kept · entropy {entropy:.2f} nats</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>ResidualView</name>
    <message>
        <source>norm</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>cosine to final residual</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>depth (0 = embeddings, then after each block)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>residual after</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>attention adds</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>MLP adds</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Run a prompt to see the residual stream.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Position {pos} {token}: the residual stream is the sum every block writes into. Top: its size after each block and the size of what attention and the MLP of that block added. Bottom: how close its direction already is to the final one (1 = same direction).</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>Snapshot</name>
    <message>
        <source>pipeline</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>chart</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>tokens</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>embeddings</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>attention</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>head</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>mlp</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>lens</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>residual</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>path</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>attribution</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>data</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>“{prompt}”</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>step {step}</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>layer {value}</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>head {value}</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>position {value}</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>Stages</name>
    <message>
        <source>Tokens</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Embed + pos</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Final LN</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>LM head</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Softmax</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Pick</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Block {layer}</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>{token}
pos {position}</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>‖x‖ {norm:.1f}
{n_embd}-d</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>h{head} {weight:.0%}
{token} {prob:.0%}</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>‖x‖ {norm:.1f}</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>{vocab:,} logits
max {logit:.1f}</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>{token}
{prob:.1%}</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>next was
{token}</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>“{token}”</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The text became {n_tokens} tokens (byte-pair pieces; a leading space belongs to the token). Position {position} is {token}, id {id}. The model reads at most {n_positions} tokens.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>{token} is looked up in a table of {vocab:,} learned vectors of {n_embd} numbers (norm {embed_norm:.2f}); the vector for position {position} (norm {pos_norm:.2f}) is added. Their sum (norm {sum_norm:.2f}) starts the residual stream that every block reads from and writes into.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Block {layer}: {n_head} attention heads let {token} read earlier tokens; head {head} puts {weight:.0%} of its attention on {key_token} (position {key}). Attention adds a vector of norm {attn_norm:.2f}, then the MLP&apos;s {d_mlp:,} neurons add norm {mlp_norm:.2f}; the residual&apos;s norm is now {resid_norm:.2f}. Read out here, it would predict {lens_token} ({lens_prob:.0%}).</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The final LayerNorm recentres and rescales the residual (norm {norm_in:.2f} → {norm_out:.2f}) so the unembedding sees a vector of standard size.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>, </source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>{token} {value:.2f}</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The LM head multiplies by the {vocab:,} token embeddings again (tied weights) to score every possible next token: {scores}. Only the last position&apos;s scores choose the next token; it is the only one that has seen the whole text.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>{token} {prob:.1%}</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Softmax turns scores into probabilities that sum to 1: {probs}. Entropy {entropy:.2f} nats (0 = certain, {max_entropy:.1f} = uniform).</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source> After this position came {token}.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Only the newest position chooses the next token; select it to see the choice.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>temperature 0: always the most likely token</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>temperature {temperature:g}, top-k {top_k}, top-p {top_p:g}, seed {seed}</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>off</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>{n:,} candidates remain</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>{n:,} candidate remains</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Choosing the next token ({rule}): {remain}; the step will append {token} ({p_final:.1%} after the settings, {p_raw:.1%} as the model gave it). Then the whole path runs again for that one token, reusing the cached keys and values.</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>StepControls</name>
    <message>
        <source>◀ Back</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Step ▶</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Reset</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Undo the last step (←): restores the stored state, no recomputation</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Append one token using the KV cache (Space or →)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Step automatically at the pace on the right</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Back to the prompt</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Pace</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>{ms} ms</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Pause</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Play</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>TokenStrip</name>
    <message>
        <source>generated</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>prompt</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>position {pos} · id {id} · bytes {bytes} · {kind}</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Type a prompt and press Run (Ctrl+Enter).</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>… {n} earlier</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>TokensView</name>
    <message>
        <source>position</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>id</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>token</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>bytes</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>kind</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Run a prompt to see its tokens.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>{n} tokens for {n_bytes} bytes of UTF-8 · context {n}/{n_positions}. A leading space belongs to the token (␣): “unbelievable” is 4 pieces (un|bel|iev|able) but “␣unbelievable” is one. Tokens marked [i-j/n] hold bytes i..j of an n-byte character.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>generated</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>prompt</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source> · partial character</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>Views</name>
    <message>
        <source>layer </source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>Worker</name>
    <message>
        <source>no model is loaded</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>run a prompt first</source>
        <translation type="unfinished"></translation>
    </message>
</context>
</TS>
