<?xml version="1.0" encoding="utf-8"?>
<!DOCTYPE TS>
<TS version="2.1" language="zh_CN">
<context>
    <name>Analysis</name>
    <message>
        <source>Stopped: cancelled, or another request came first.</source>
        <translation>已停止：被取消，或有新的请求先到。</translation>
    </message>
</context>
<context>
    <name>AnalysisTabs</name>
    <message>
        <source>Activation patching</source>
        <translation>激活修补</translation>
    </message>
    <message>
        <source>Causal trace</source>
        <translation>因果追踪</translation>
    </message>
    <message>
        <source>Circuit graph</source>
        <translation>电路图</translation>
    </message>
</context>
<context>
    <name>AppState</name>
    <message>
        <source>{path} exists: choose a new folder name.</source>
        <translation>{path} 已存在：请换一个新的文件夹名。</translation>
    </message>
    <message>
        <source>No model edit is in force: make one with Analysis → Edit a fact (ROME) first.</source>
        <translation>当前没有生效的模型编辑：请先用 分析 → 编辑一条事实（ROME）做一次编辑。</translation>
    </message>
</context>
<context>
    <name>AttentionView</name>
    <message>
        <source>pattern (after softmax)</source>
        <translation>注意力权重（Softmax 之后）</translation>
    </message>
    <message>
        <source>scores (before softmax)</source>
        <translation>注意力分数（Softmax 之前）</translation>
    </message>
    <message>
        <source>hover a cell for its exact value</source>
        <translation>鼠标悬停在格子上可查看精确数值</translation>
    </message>
    <message>
        <source>weight</source>
        <translation>权重</translation>
    </message>
    <message>
        <source>head {head}</source>
        <translation>头 {head}</translation>
    </message>
    <message>
        <source>Run a prompt to see attention.</source>
        <translation>运行一段提示词，即可查看注意力。</translation>
    </message>
    <message>
        <source>head {head} · entropy at position {pos}: {entropy:.2f} nats · click to enlarge</source>
        <translation>头 {head} · 位置 {pos} 的熵：{entropy:.2f} 奈特 · 点击放大</translation>
    </message>
    <message>
        <source>head {head} · {entropy:.2f} nats</source>
        <translation>头 {head} · {entropy:.2f} 奈特</translation>
    </message>
    <message>
        <source>pattern</source>
        <translation>权重</translation>
    </message>
    <message>
        <source>scores</source>
        <translation>分数</translation>
    </message>
    <message>
        <source>layer {layer}, head {head}: {what} (rows read columns)</source>
        <translation>第 {layer} 层 · 头 {head}：{what}（行读取列）</translation>
    </message>
    <message>
        <source>what {token} (position {pos}) reads, head {head}</source>
        <translation>{token}（位置 {pos}）读取了什么，头 {head}</translation>
    </message>
    <message>
        <source> Showing the newest {n} of {total} positions.</source>
        <translation> 只显示 {total} 个位置中最新的 {n} 个。</translation>
    </message>
    <message>
        <source>Layer {layer}: each small map is one head&apos;s attention, query (row) × key (column); grey cells are the future, masked. Click a head to enlarge it. Entropy at position {pos} (nats; 0 = one token gets everything): {entropies}.</source>
        <translation>第 {layer} 层：每张小图是一个头的注意力，查询（行）× 键（列）；灰色格子是尚未出现的未来位置，已被掩码遮住。点击某个头可将其放大。位置 {pos} 的熵（单位奈特；0 表示全部权重落在一个词元上）：{entropies}。</translation>
    </message>
    <message>
        <source>masked (future)</source>
        <translation>已掩码（未来位置）</translation>
    </message>
    <message>
        <source>query {q} {q_token} → key {k} {k_token}: {value}</source>
        <translation>查询 {q} {q_token} → 键 {k} {k_token}：{value}</translation>
    </message>
</context>
<context>
    <name>Attribution</name>
    <message>
        <source>token embed</source>
        <translation>词元嵌入</translation>
    </message>
    <message>
        <source>pos embed</source>
        <translation>位置编码</translation>
    </message>
    <message>
        <source>L{layer}.H{head}</source>
        <translation>第{layer}层·头{head}</translation>
    </message>
    <message>
        <source>L{layer} b_O</source>
        <translation>第{layer}层·b_O</translation>
    </message>
    <message>
        <source>MLP {layer}</source>
        <translation>第{layer}层·前馈网络</translation>
    </message>
    <message>
        <source>{part} ← {token}</source>
        <translation>{part} ← {token}</translation>
    </message>
    <message>
        <source>{token} (position {position}), carried by head {layer}.{head}, added {value:+.3f} to {target}</source>
        <translation>{token}（位置 {position}），经注意力头 {layer}.{head} 传入，为 {target} 加了 {value:+.3f}</translation>
    </message>
    <message>
        <source>{token} (position {position}), carried by head {layer}.{head}, took {value:+.3f} from {target}</source>
        <translation>{token}（位置 {position}），经注意力头 {layer}.{head} 传入，从 {target} 减去 {value:+.3f}</translation>
    </message>
</context>
<context>
    <name>CausalPanel</name>
    <message>
        <source>Subject</source>
        <translation>主语</translation>
    </message>
    <message>
        <source>Target</source>
        <translation>目标</translation>
    </message>
    <message>
        <source>Noise ×σ</source>
        <translation>噪声 ×σ</translation>
    </message>
    <message>
        <source>Samples</source>
        <translation>样本数</translation>
    </message>
    <message>
        <source>Window</source>
        <translation>窗口</translation>
    </message>
    <message>
        <source>Seed</source>
        <translation>随机种子</translation>
    </message>
    <message>
        <source>Shift+click tokens, or type</source>
        <translation>Shift+点击词元，或直接输入</translation>
    </message>
    <message>
        <source>A&apos;s top token</source>
        <translation>A 的首选词元</translation>
    </message>
    <message>
        <source>Trace</source>
        <translation>追踪</translation>
    </message>
    <message>
        <source>Cancel</source>
        <translation>取消</translation>
    </message>
    <message>
        <source>Export…</source>
        <translation>导出…</translation>
    </message>
    <message>
        <source>hover a cell for its numbers</source>
        <translation>将鼠标悬停在单元格上查看数值</translation>
    </message>
    <message>
        <source>Causal trace (ROME): the subject&apos;s embeddings get Gaussian noise (noise × the embedding&apos;s standard deviation, averaged over the samples); then one state of the clean run is restored at a time. Bright cells are where restoring brings the answer back.</source>
        <translation>因果追踪（ROME）：给主语词元的嵌入加上高斯噪声（噪声 × 嵌入的标准差，对多个样本取平均）；然后每次恢复干净运行中的一个状态。亮的单元格表示恢复该状态能让答案回来。</translation>
    </message>
    <message>
        <source>Run prompt A first.</source>
        <translation>请先运行提示 A。</translation>
    </message>
    <message>
        <source>Tracing with {subject} corrupted…</source>
        <translation>正在追踪（已破坏 {subject}）…</translation>
    </message>
    <message>
        <source>hidden state (block input)</source>
        <translation>隐藏状态（模块输入）</translation>
    </message>
    <message>
        <source>MLP output</source>
        <translation>MLP 输出</translation>
    </message>
    <message>
        <source>attention output</source>
        <translation>注意力输出</translation>
    </message>
    <message>
        <source>{kind}: p({target}) {lo:.3f} … {hi:.3f}</source>
        <translation>{kind}：p({target}) {lo:.3f} … {hi:.3f}</translation>
    </message>
    <message>
        <source>With A&apos;s interventions in force: {interventions}</source>
        <translation>A 的干预生效时：{interventions}</translation>
    </message>
    <message>
        <source>Before them (the model as shipped), on the same colour scale</source>
        <translation>干预之前（原始模型），使用相同的色标</translation>
    </message>
    <message>
        <source>{kind}: p({target})</source>
        <translation>{kind}：p({target})</translation>
    </message>
    <message>
        <source>{kind}: layer {layer}, {token} → {p:.3f}</source>
        <translation>{kind}：第 {layer} 层，{token} → {p:.3f}</translation>
    </message>
    <message>
        <source>p({target}): clean {clean:.4f}, corrupted {corrupt:.4f} (noise {noise:g}σ, {samples} samples, window {window}, {ms:.0f} ms). Best restores: {best}.</source>
        <translation>p({target})：干净 {clean:.4f}，破坏后 {corrupt:.4f}（噪声 {noise:g}σ，{samples} 个样本，窗口 {window}，{ms:.0f} 毫秒）。最有效的恢复：{best}。</translation>
    </message>
    <message>
        <source>Traced with A&apos;s interventions in force ({interventions}); the lower row is the same trace without them. p({target}) clean: {clean:.4f} with, {clean0:.4f} before; corrupted: {corrupt:.4f} with, {corrupt0:.4f} before.</source>
        <translation>在 A 的干预生效时追踪（{interventions}）；下面一行是不加这些干预的同一追踪。p({target}) 干净运行：加干预 {clean:.4f}，之前 {clean0:.4f}；加噪运行：加干预 {corrupt:.4f}，之前 {corrupt0:.4f}。</translation>
    </message>
    <message>
        <source>{kind}: restoring layer {layer} at {token} (position {pos}): p({target}) = {p:.4f} (clean {clean:.4f}, corrupted {corrupt:.4f})</source>
        <translation>{kind}：在 {token}（位置 {pos}）恢复第 {layer} 层：p({target}) = {p:.4f}（干净 {clean:.4f}，破坏后 {corrupt:.4f}）</translation>
    </message>
    <message>
        <source>(with the interventions: {p:.4f})</source>
        <translation>（加干预时：{p:.4f}）</translation>
    </message>
    <message>
        <source>(before: {p:.4f})</source>
        <translation>（之前：{p:.4f}）</translation>
    </message>
</context>
<context>
    <name>CompareDock</name>
    <message>
        <source>Prompt B</source>
        <translation>提示 B</translation>
    </message>
    <message>
        <source>Run B</source>
        <translation>运行 B</translation>
    </message>
    <message>
        <source>a second prompt, e.g. The capital of Germany is</source>
        <translation>第二个提示，例如 The capital of Germany is</translation>
    </message>
    <message>
        <source>Logit lens: A | B</source>
        <translation>Logit 透镜：A | B</translation>
    </message>
    <message>
        <source>Attention: A | B</source>
        <translation>注意力：A | B</translation>
    </message>
    <message>
        <source>Differences B − A</source>
        <translation>差值 B − A</translation>
    </message>
    <message>
        <source>The differences need two texts of the same number of tokens.</source>
        <translation>差值需要两段词元数相同的文本。</translation>
    </message>
    <message>
        <source>logit lens: p_B − p_A of A&apos;s top token</source>
        <translation>Logit 透镜：A 的首选词元的 p_B − p_A</translation>
    </message>
    <message>
        <source>embed</source>
        <translation>嵌入</translation>
    </message>
    <message>
        <source>attention {layer}.{head}: B − A (±{lim:.2f})</source>
        <translation>注意力 {layer}.{head}：B − A（±{lim:.2f}）</translation>
    </message>
    <message>
        <source>Yellow: B larger; dark blue: A larger; the middle of the scale: equal. The head is the one selected in A&apos;s attention view; the lens compares A&apos;s top token at every depth.</source>
        <translation>黄色：B 更大；深蓝：A 更大；色标中间：相等。注意力头是 A 的注意力视图中选中的那个；透镜比较的是 A 在每个深度的首选词元。</translation>
    </message>
</context>
<context>
    <name>DetailTabs</name>
    <message>
        <source>Tokens</source>
        <translation>词元</translation>
    </message>
    <message>
        <source>Embeddings</source>
        <translation>嵌入</translation>
    </message>
    <message>
        <source>Attention</source>
        <translation>注意力</translation>
    </message>
    <message>
        <source>MLP</source>
        <translation>前馈网络 (MLP)</translation>
    </message>
    <message>
        <source>Logit lens</source>
        <translation>Logit 透镜</translation>
    </message>
    <message>
        <source>Residual</source>
        <translation>残差流</translation>
    </message>
    <message>
        <source>Path</source>
        <translation>路径</translation>
    </message>
    <message>
        <source>Features</source>
        <translation>特征</translation>
    </message>
</context>
<context>
    <name>EditFactDialog</name>
    <message>
        <source>Edit a fact (ROME)</source>
        <translation>编辑一条事实（ROME）</translation>
    </message>
    <message>
        <source>a part of the prompt, e.g.  France</source>
        <translation>提示中的一段，例如  France</translation>
    </message>
    <message>
        <source>the new continuation, e.g.  Rome</source>
        <translation>新的接续，例如  Rome</translation>
    </message>
    <message>
        <source>from the causal trace</source>
        <translation>取自因果追踪</translation>
    </message>
    <message>
        <source>Prompt</source>
        <translation>提示</translation>
    </message>
    <message>
        <source>Subject</source>
        <translation>主语</translation>
    </message>
    <message>
        <source>New target</source>
        <translation>新目标</translation>
    </message>
    <message>
        <source>Block (MLP)</source>
        <translation>块（MLP）</translation>
    </message>
    <message>
        <source>Edit</source>
        <translation>编辑</translation>
    </message>
    <message>
        <source>Cancel</source>
        <translation>取消</translation>
    </message>
    <message>
        <source>ROME writes the new fact into one MLP&apos;s output weight (a rank-one change) so that the subject&apos;s key now reads out the new target. The edit joins prompt A&apos;s interventions; remove its chip to undo it.</source>
        <translation>ROME 把新事实写进一个 MLP 的输出权重（秩一修改），让主语的键读出新的目标。这次编辑加入提示 A 的干预；移除它的标签即可撤销。</translation>
    </message>
    <message>
        <source>No model is loaded.</source>
        <translation>没有加载模型。</translation>
    </message>
    <message>
        <source>Computing the edit…</source>
        <translation>正在计算编辑…</translation>
    </message>
    <message>
        <source>Stopped: cancelled, failed, or another request came first.</source>
        <translation>已停止：被取消、失败，或有新的请求先到。</translation>
    </message>
    <message>
        <source>given</source>
        <translation>指定</translation>
    </message>
    <message>
        <source>n/a</source>
        <translation>无</translation>
    </message>
    <message>
        <source>In force on prompt A: block {layer}&apos;s MLP ({source}). P({target} | prompt) {before:.2%} before, {after:.2%} after (the old answer {old}).</source>
        <translation>已作用于提示 A：第 {layer} 块的 MLP（{source}）。P({target} | 提示) 编辑前 {before:.2%}，编辑后 {after:.2%}（原答案 {old}）。</translation>
    </message>
    <message>
        <source>Efficacy {eff}; paraphrases {para} (Chinese {zh}); other subjects kept {nb} (before the edit {nb0}); fluency {f0:.2f} → {f1:.2f} bits.</source>
        <translation>有效率 {eff}；改写句 {para}（中文 {zh}）；其他主语保持不变 {nb}（编辑前 {nb0}）；流畅度 {f0:.2f} → {f1:.2f} 比特。</translation>
    </message>
</context>
<context>
    <name>EmbeddingsView</name>
    <message>
        <source>token</source>
        <translation>词元</translation>
    </message>
    <message>
        <source>position</source>
        <translation>位置</translation>
    </message>
    <message>
        <source>sum</source>
        <translation>求和</translation>
    </message>
    <message>
        <source>dimension</source>
        <translation>维度</translation>
    </message>
    <message>
        <source>&lt;b&gt;Analogy&lt;/b&gt; over the embedding matrix: nearest tokens to a − b + c</source>
        <translation>在嵌入矩阵上做&lt;b&gt;类比&lt;/b&gt;：与 a − b + c 最接近的词元</translation>
    </message>
    <message>
        <source>Type three words (a leading space makes the usual word-initial token).</source>
        <translation>输入三个词（词前加一个空格，得到的才是常见的词首词元）。</translation>
    </message>
    <message>
        <source>Run a prompt to see its embeddings.</source>
        <translation>运行一段提示词，即可查看它的嵌入。</translation>
    </message>
    <message>
        <source>Position {pos}, {token} (id {id}): token vector ‖{ne:.2f}‖ + position vector ‖{npos:.2f}‖ = ‖{ns:.2f}‖, the residual stream entering block 0 ({n} numbers; blue negative, red positive).</source>
        <translation>位置 {pos}，{token}（id {id}）：词元向量 ‖{ne:.2f}‖ + 位置向量 ‖{npos:.2f}‖ = ‖{ns:.2f}‖，这就是进入第 0 个模块的残差流（共 {n} 个数；蓝色为负，红色为正）。</translation>
    </message>
    <message>
        <source>&lt;b&gt;Nearest tokens&lt;/b&gt; to {token} (cosine):</source>
        <translation>与 {token} &lt;b&gt;最接近的词元&lt;/b&gt;（余弦相似度）：</translation>
    </message>
    <message>
        <source>“{text}” is {n} tokens; each term must be one token.</source>
        <translation>“{text}”是 {n} 个词元；每一项都必须恰好是一个词元。</translation>
    </message>
</context>
<context>
    <name>FeaturePageWidget</name>
    <message>
        <source>Where it fires most (text gpt2viz ships)</source>
        <translation>它在哪里激活最强（gpt2viz 自带的文本）</translation>
    </message>
    <message>
        <source>What it writes: its direction read by the unembedding</source>
        <translation>它写入了什么：用反嵌入读出它的方向</translation>
    </message>
    <message>
        <source>Nearest features (decoder cosine)</source>
        <translation>最接近的特征（解码器余弦相似度）</translation>
    </message>
    <message>
        <source>Change it inside the model</source>
        <translation>在模型内部改动它</translation>
    </message>
    <message>
        <source>Steer adds scale × its direction to this block&apos;s input at every position, tokens generated next included; ablate sets its activation to 0. Each becomes a chip above the chart; the chart&apos;s ghost bars show the run without it.</source>
        <translation>引导：在每个位置（包括之后生成的词元）给这个模块的输入加上 倍数 × 它的方向；消融：把它的激活设为 0。每一项都会成为图表上方的一个标签；图表中的虚影条显示没有它时的运行结果。</translation>
    </message>
    <message>
        <source>Test your own text</source>
        <translation>用你自己的文本试一试</translation>
    </message>
    <message>
        <source>scale</source>
        <translation>倍数</translation>
    </message>
    <message>
        <source>Steer</source>
        <translation>引导</translation>
    </message>
    <message>
        <source>Ablate at this position</source>
        <translation>在此位置消融</translation>
    </message>
    <message>
        <source>Ablate everywhere</source>
        <translation>在所有位置消融</translation>
    </message>
    <message>
        <source>a sentence to read this feature on</source>
        <translation>输入一句话，看这个特征在上面的激活</translation>
    </message>
    <message>
        <source>Read</source>
        <translation>读取</translation>
    </message>
    <message>
        <source>activation</source>
        <translation>激活值</translation>
    </message>
    <message>
        <source>count</source>
        <translation>次数</translation>
    </message>
    <message>
        <source>Click a feature to open its page.</source>
        <translation>点击一个特征，打开它的页面。</translation>
    </message>
    <message>
        <source>Feature {f} of block {L} has no dashboard: build them with gpt2viz sae-dashboards.</source>
        <translation>模块 {L} 的特征 {f} 没有仪表盘：请用 gpt2viz sae-dashboards 生成。</translation>
    </message>
    <message>
        <source>Block {L} · feature {f}</source>
        <translation>模块 {L} · 特征 {f}</translation>
    </message>
    <message>
        <source>Block {L} · MLP transcoder feature {f}</source>
        <translation>模块 {L} · MLP 转码器特征 {f}</translation>
    </message>
    <message>
        <source>(never fired on the text)</source>
        <translation>（在文本上从未激活）</translation>
    </message>
    <message>
        <source>; here {value:.2f}</source>
        <translation>；此处 {value:.2f}</translation>
    </message>
    <message>
        <source>Fires on {density:.2%} of the {n:,} tokens of {corpus}; strongest {top:.2f}{here}. Histogram: its non-zero activations.</source>
        <translation>在 {corpus} 的 {n:,} 个词元中，有 {density:.2%} 处激活；最强 {top:.2f}{here}。直方图：它的非零激活值。</translation>
    </message>
    <message>
        <source>Top activations</source>
        <translation>最强激活</translation>
    </message>
    <message>
        <source>Activations between {lo:.0%} and {hi:.0%} of the strongest</source>
        <translation>激活值为最强值的 {lo:.0%} 到 {hi:.0%}</translation>
    </message>
    <message>
        <source>promotes {up}&lt;br&gt;suppresses {down}</source>
        <translation>提升 {up}&lt;br&gt;压低 {down}</translation>
    </message>
    <message>
        <source>reading…</source>
        <translation>读取中…</translation>
    </message>
    <message>
        <source>strongest: {token} ({value:.2f})</source>
        <translation>最强：{token}（{value:.2f}）</translation>
    </message>
</context>
<context>
    <name>FeaturesView</name>
    <message>
        <source>feature</source>
        <translation>特征</translation>
    </message>
    <message>
        <source>activation</source>
        <translation>激活值</translation>
    </message>
    <message>
        <source>fires on</source>
        <translation>激活频率</translation>
    </message>
    <message>
        <source>label: fires on → writes</source>
        <translation>标签：在哪些词元激活 → 写向哪个词元</translation>
    </message>
    <message>
        <source>Run a prompt to see the features active at each block.</source>
        <translation>运行一段提示词，即可查看每个模块上激活的特征。</translation>
    </message>
    <message>
        <source>This model has no sparse autoencoder for block {L}&apos;s input, so there are no features to show: train one with gpt2viz train-sae --hook blocks.{L}.hook_resid_pre and put it in the model folder&apos;s saes/.</source>
        <translation>这个模型没有针对模块 {L} 输入的稀疏自编码器，所以没有特征可显示：可用 gpt2viz train-sae --hook blocks.{L}.hook_resid_pre 训练一个，并放进模型文件夹的 saes/ 中。</translation>
    </message>
    <message>
        <source>Block {L}&apos;s input at position {pos} {token}, read by a {arch} sparse autoencoder of {n:,} features: {l0} active. They rebuild the vector up to an error of {err:.1%} of its length (what the features leave out). Click a feature for its page.</source>
        <translation>模块 {L} 在位置 {pos} {token} 的输入，由一个有 {n:,} 个特征的 {arch} 稀疏自编码器读取：{l0} 个处于激活。它们重建出的向量与原向量相差其长度的 {err:.1%}（这是特征没有表达的部分）。点击一个特征查看它的页面。</translation>
    </message>
</context>
<context>
    <name>Figures</name>
    <message>
        <source>Every panel uses the same scale ({lo:.3g} … {hi:.3g}).</source>
        <translation>所有小图共用同一数值范围（{lo:.3g} … {hi:.3g}）。</translation>
    </message>
    <message>
        <source>The path of {token} (position {pos}) through {model}</source>
        <translation>{token}（位置 {pos}）在 {model} 中走过的路径</translation>
    </message>
    <message>
        <source>Each box is one stage the token passes through, with its live numbers; the outlined one is explained below.</source>
        <translation>每个方框是词元经过的一个阶段，框内是实时数值；高亮边框的阶段在下方说明。</translation>
    </message>
    <message>
        <source>no patching table has been computed</source>
        <translation>尚未计算激活修补表</translation>
    </message>
    <message>
        <source>position (clean/corrupted token)</source>
        <translation>位置（干净/破坏后的词元）</translation>
    </message>
    <message>
        <source>head (z patched at every position)</source>
        <translation>注意力头（在每个位置修补 z）</translation>
    </message>
    <message>
        <source>normalised effect</source>
        <translation>归一化效果</translation>
    </message>
    <message>
        <source>layer</source>
        <translation>层</translation>
    </message>
    <message>
        <source>Activation patching of {site}: clean → corrupted, target {t}</source>
        <translation>{site} 的激活修补：干净 → 破坏后，目标 {t}</translation>
    </message>
    <message>
        <source>Effect = (p − p_corrupt) / (p_clean − p_corrupt): 1 = the clean answer fully back, 0 = no change. p({t}) clean {pc:.4f}, corrupted {pk:.4f}. Best cell: layer {L}, column {c} ({col}): effect {e:.3f}, p = {p:.4f}. {n} graph calls.</source>
        <translation>效果 = (p − p_破坏) / (p_干净 − p_破坏)：1 = 干净答案完全恢复，0 = 没有变化。p({t})：干净 {pc:.4f}，破坏后 {pk:.4f}。最佳单元格：第 {L} 层，第 {c} 列（{col}）：效果 {e:.3f}，p = {p:.4f}。共调用计算图 {n} 次。</translation>
    </message>
    <message>
        <source>no causal trace has been computed</source>
        <translation>尚未计算因果追踪</translation>
    </message>
    <message>
        <source>hidden state (block L&apos;s input)</source>
        <translation>隐藏状态（模块 L 的输入）</translation>
    </message>
    <message>
        <source>MLP output</source>
        <translation>MLP 输出</translation>
    </message>
    <message>
        <source>attention output</source>
        <translation>注意力输出</translation>
    </message>
    <message>
        <source>p({t})</source>
        <translation>p({t})</translation>
    </message>
    <message>
        <source>{kind}: layer {L} at {tok} → {p:.3f}</source>
        <translation>{kind}：{tok} 处第 {L} 层 → {p:.3f}</translation>
    </message>
    <message>
        <source>Causal trace: p({t}) with the subject corrupted and one state restored</source>
        <translation>因果追踪：破坏主语后恢复单个状态时的 p({t})</translation>
    </message>
    <message>
        <source>Subject (*, framed): {s}. Noise {noise:g} × the embedding&apos;s standard deviation, mean of {n} samples; MLP / attention window {w}. p clean {pc:.4f}, corrupted {pk:.4f}. Each panel&apos;s colour starts at its corrupted score. Best: {best}.</source>
        <translation>主语（*，带框）：{s}。噪声为嵌入标准差的 {noise:g} 倍，取 {n} 个样本的平均；MLP / 注意力窗口 {w}。p 干净 {pc:.4f}，破坏后 {pk:.4f}。每个面板的颜色从其破坏后的得分开始。最佳：{best}。</translation>
    </message>
    <message>
        <source>the comparison needs a second prompt (--compare)</source>
        <translation>比较需要第二个提示（--compare）</translation>
    </message>
    <message>
        <source>probability of being the next token (%)</source>
        <translation>成为下一个词元的概率（%）</translation>
    </message>
    <message>
        <source>A: {t}</source>
        <translation>A：{t}</translation>
    </message>
    <message>
        <source>B: {t}</source>
        <translation>B：{t}</translation>
    </message>
    <message>
        <source>Next token, A vs B: A&apos;s top {a}, B&apos;s top {b}</source>
        <translation>下一个词元，A 对比 B：A 的首选 {a}，B 的首选 {b}</translation>
    </message>
    <message>
        <source>The model&apos;s own probabilities (no sampling settings), for every token in either prompt&apos;s top list.</source>
        <translation>模型自身的概率（不含采样设置），覆盖两个提示首选列表中的所有词元。</translation>
    </message>
    <message>
        <source>probability of the top token</source>
        <translation>首选词元的概率</translation>
    </message>
    <message>
        <source>B − A (A&apos;s top token)</source>
        <translation>B − A（A 的首选词元）</translation>
    </message>
    <message>
        <source>A</source>
        <translation>A</translation>
    </message>
    <message>
        <source>B</source>
        <translation>B</translation>
    </message>
    <message>
        <source>difference B − A</source>
        <translation>差值 B − A</translation>
    </message>
    <message>
        <source>Logit lens, A and B side by side</source>
        <translation>Logit 透镜：A 与 B 并排</translation>
    </message>
    <message>
        <source>Each cell: the token the residual would predict after that block, and its probability.</source>
        <translation>每个单元格：残差流在该模块之后会预测的词元及其概率。</translation>
    </message>
    <message>
        <source>Attention in block {L}, A and B side by side</source>
        <translation>模块 {L} 的注意力：A 与 B 并排</translation>
    </message>
    <message>
        <source>  (model {p:.1%})</source>
        <translation>  （模型 {p:.1%}）</translation>
    </message>
    <message>
        <source>  (before {p:.1%})</source>
        <translation>  （干预前 {p:.1%}）</translation>
    </message>
    <message>
        <source>before the interventions</source>
        <translation>干预之前</translation>
    </message>
    <message>
        <source>model&apos;s own probability</source>
        <translation>模型原始概率</translation>
    </message>
    <message>
        <source>after the sampling settings</source>
        <translation>按采样设置之后</translation>
    </message>
    <message>
        <source>★ what a step takes</source>
        <translation>★ 单步会选的词元</translation>
    </message>
    <message>
        <source>Next token after position {pos}: {n} of {v} tokens kept, entropy {e:.2f} nats</source>
        <translation>位置 {pos} 之后的下一个词元：{v} 个词元中保留 {n} 个，熵 {e:.2f} 奈特</translation>
    </message>
    <message>
        <source>Settings: temperature {t:g}, top-k {k}, top-p {p:g}, seed {s}. ✕ = cut by top-k / top-p.</source>
        <translation>设置：温度 {t:g}，Top-k {k}，Top-p {p:g}，随机种子 {s}。✕ = 被 Top-k / Top-p 截掉。</translation>
    </message>
    <message>
        <source>off</source>
        <translation>关闭</translation>
    </message>
    <message>
        <source>position</source>
        <translation>位置</translation>
    </message>
    <message>
        <source>id</source>
        <translation>id</translation>
    </message>
    <message>
        <source>token</source>
        <translation>词元</translation>
    </message>
    <message>
        <source>bytes (hex)</source>
        <translation>字节（十六进制）</translation>
    </message>
    <message>
        <source>kind</source>
        <translation>类型</translation>
    </message>
    <message>
        <source>generated</source>
        <translation>生成</translation>
    </message>
    <message>
        <source>prompt</source>
        <translation>提示词</translation>
    </message>
    <message>
        <source> · partial character</source>
        <translation> · 不完整字符</translation>
    </message>
    <message>
        <source>{n} tokens for {b} bytes of UTF-8 (context {n}/{c})</source>
        <translation>{b} 字节的 UTF-8 文本共 {n} 个词元（上下文 {n}/{c}）</translation>
    </message>
    <message>
        <source>A leading space belongs to the token (␣). [i-j/n] marks bytes i..j of an n-byte character.</source>
        <translation>词前的空格属于该词元（␣）。[i-j/n] 表示某个 n 字节字符的第 i 到 j 个字节。</translation>
    </message>
    <message>
        <source> The table shows the newest {k} tokens.</source>
        <translation> 表中只列出最新的 {k} 个词元。</translation>
    </message>
    <message>
        <source>value of the dimension</source>
        <translation>各维取值</translation>
    </message>
    <message>
        <source>Nearest tokens to {t} (cosine, unembedding directions):</source>
        <translation>与 {t} 最接近的词元（余弦相似度，按反嵌入方向）：</translation>
    </message>
    <message>
        <source>token ‖{n:.2f}‖</source>
        <translation>词元 ‖{n:.2f}‖</translation>
    </message>
    <message>
        <source>position ‖{n:.2f}‖</source>
        <translation>位置 ‖{n:.2f}‖</translation>
    </message>
    <message>
        <source>sum ‖{n:.2f}‖</source>
        <translation>求和 ‖{n:.2f}‖</translation>
    </message>
    <message>
        <source>dimension (0 … {e})</source>
        <translation>维度（0 … {e}）</translation>
    </message>
    <message>
        <source>Embedding of {t} (id {id}) at position {pos}: token + position = the residual entering block 0</source>
        <translation>位置 {pos} 上 {t}（id {id}）的嵌入：词元 + 位置 = 进入第 0 个模块的残差流</translation>
    </message>
    <message>
        <source>{e} numbers per vector; blue negative, red positive, one symmetric scale.</source>
        <translation>每个向量 {e} 个数；蓝色为负，红色为正，三行共用一个对称色标。</translation>
    </message>
    <message>
        <source>attention weight (0–1)</source>
        <translation>注意力权重（0–1）</translation>
    </message>
    <message>
        <source>score q·k/√d (logit units)</source>
        <translation>分数 q·k/√d（逻辑值单位）</translation>
    </message>
    <message>
        <source>head {h} · {e:.2f} nats</source>
        <translation>头 {h} · {e:.2f} 奈特</translation>
    </message>
    <message>
        <source>Rows are queries (the token reading), columns keys (the token read); grey cells are the future, masked. Entropy at the selected query in nats (0 = one key takes all).</source>
        <translation>行是查询（发起读取的词元），列是键（被读取的词元）；灰色格子是尚未出现的未来位置，已被掩码遮住。所选查询处的熵以奈特为单位（0 表示全部权重落在一个键上）。</translation>
    </message>
    <message>
        <source> The newest {k} of {n} positions are drawn.</source>
        <translation> 只画出 {n} 个位置中最新的 {k} 个。</translation>
    </message>
    <message>
        <source>Attention in block {L}: every head, query × key</source>
        <translation>模块 {L} 的注意力：所有头，查询 × 键</translation>
    </message>
    <message>
        <source>transcoder feature</source>
        <translation>转码器特征</translation>
    </message>
    <message>
        <source>MLP error</source>
        <translation>MLP 误差</translation>
    </message>
    <message>
        <source>raises</source>
        <translation>提高</translation>
    </message>
    <message>
        <source>lowers</source>
        <translation>降低</translation>
    </message>
    <message>
        <source>tokens</source>
        <translation>词元</translation>
    </message>
    <message>
        <source>logits</source>
        <translation>logits</translation>
    </message>
    <message>
        <source>block {L}</source>
        <translation>模块 {L}</translation>
    </message>
    <message>
        <source>Each circle is a transcoder feature active at that block and position, each square the part of the MLP&apos;s output the transcoder misses; lines are direct effects through the frozen attention and residual stream, blue raising and red lowering, wider for larger. Shown: {n} nodes ({hn} more in the file) and the {e} strongest links ({he} more).</source>
        <translation>每个圆点是在该块、该位置激活的转码器特征，每个方块是转码器没有还原的那部分 MLP 输出；连线是经过冻结的注意力和残差流的直接作用，蓝色为提高、红色为降低，越粗作用越大。图中画出 {n} 个节点（文件里另有 {hn} 个）和最强的 {e} 条连线（另有 {he} 条）。</translation>
    </message>
    <message>
        <source>Replacement score {r:.3f}, completeness score {c:.3f}.</source>
        <translation>替换得分 {r:.3f}，完整性得分 {c:.3f}。</translation>
    </message>
    <message>
        <source>{q} (position {pos}) reads, head {h}: </source>
        <translation>{q}（位置 {pos}）通过头 {h} 读取： </translation>
    </message>
    <message>
        <source>key (position, token)</source>
        <translation>键（位置，词元）</translation>
    </message>
    <message>
        <source>query (position, token)</source>
        <translation>查询（位置，词元）</translation>
    </message>
    <message>
        <source>head {h}</source>
        <translation>头 {h}</translation>
    </message>
    <message>
        <source>Block {L}, head {h}: {what}</source>
        <translation>模块 {L}，头 {h}：{what}</translation>
    </message>
    <message>
        <source>attention weights, after softmax</source>
        <translation>注意力权重（Softmax 之后）</translation>
    </message>
    <message>
        <source>attention scores, before softmax</source>
        <translation>注意力分数（Softmax 之前）</translation>
    </message>
    <message>
        <source>block {L}, head {h}</source>
        <translation>模块 {L}，头 {h}</translation>
    </message>
    <message>
        <source>Rows are queries, columns keys; grey cells are the future, masked.</source>
        <translation>行是查询，列是键；灰色格子是尚未出现的未来位置，已被掩码遮住。</translation>
    </message>
    <message>
        <source>neuron (0 … {n})</source>
        <translation>神经元（0 … {n}）</translation>
    </message>
    <message>
        <source>activation (after GELU)</source>
        <translation>激活值（GELU 之后）</translation>
    </message>
    <message>
        <source>Biggest writers (neuron: activation, × ‖value‖)</source>
        <translation>写入最多的神经元（神经元：激活值，× ‖值‖）</translation>
    </message>
    <message>
        <source>The whole MLP output, read by the unembedding</source>
        <translation>整个前馈网络的输出，经反嵌入读出</translation>
    </message>
    <message>
        <source>Features of block {L}&apos;s input at position {pos} {t}</source>
        <translation>模块 {L} 在位置 {pos} {t} 的输入上的特征</translation>
    </message>
    <message>
        <source>The model has no sparse autoencoder for this block.</source>
        <translation>这个模型没有针对该模块的稀疏自编码器。</translation>
    </message>
    <message>
        <source>activation</source>
        <translation>激活值</translation>
    </message>
    <message>
        <source>  (fires on {d:.1%})</source>
        <translation>  （激活频率 {d:.1%}）</translation>
    </message>
    <message>
        <source>{arch} SAE of {n} features on {hook}: {l0} active here; they rebuild the vector up to an error of {err:.1%} of its length. Labels: the tokens a feature fires on most → the token it promotes most.</source>
        <translation>{hook} 上有 {n} 个特征的 {arch} 稀疏自编码器：此处 {l0} 个激活；它们重建的向量与原向量相差其长度的 {err:.1%}。标签：特征激活最强的词元 → 它最提升的词元。</translation>
    </message>
    <message>
        <source>Feature {f} of block {L}</source>
        <translation>模块 {L} 的特征 {f}</translation>
    </message>
    <message>
        <source>No dashboard for this feature (is there an SAE with dashboards for this block? see gpt2viz sae-dashboards).</source>
        <translation>这个特征没有仪表盘（该模块是否有带仪表盘的稀疏自编码器？参见 gpt2viz sae-dashboards）。</translation>
    </message>
    <message>
        <source>What it writes (its direction through ln_f&apos;s weight and the unembedding)</source>
        <translation>它写入了什么（它的方向经过 ln_f 的权重和反嵌入）</translation>
    </message>
    <message>
        <source>promotes </source>
        <translation>推高 </translation>
    </message>
    <message>
        <source>suppresses </source>
        <translation>压低 </translation>
    </message>
    <message>
        <source>Nearest features (decoder cosine)</source>
        <translation>最接近的特征（解码器余弦相似度）</translation>
    </message>
    <message>
        <source>activation (non-zero)</source>
        <translation>激活值（非零）</translation>
    </message>
    <message>
        <source>count</source>
        <translation>次数</translation>
    </message>
    <message>
        <source>Top activations</source>
        <translation>最强激活</translation>
    </message>
    <message>
        <source>Between {lo:.0%} and {hi:.0%} of the strongest</source>
        <translation>最强值的 {lo:.0%} 到 {hi:.0%} 之间</translation>
    </message>
    <message>
        <source>Block {L} · feature {f}: {label}</source>
        <translation>模块 {L} · 特征 {f}：{label}</translation>
    </message>
    <message>
        <source> Here (position {pos}): {v:.2f}.</source>
        <translation> 此处（位置 {pos}）：{v:.2f}。</translation>
    </message>
    <message>
        <source>Fires on {d:.2%} of the {n} tokens of {corpus}; strongest {top:.2f}.</source>
        <translation>在 {corpus} 的 {n} 个词元中有 {d:.2%} 处激活；最强 {top:.2f}。</translation>
    </message>
    <message>
        <source>Neuron {n}&apos;s value vector W_out[{n}] · W_U</source>
        <translation>神经元 {n} 的值向量 W_out[{n}] · W_U</translation>
    </message>
    <message>
        <source>MLP of block {L} at position {pos} {t}: {n} neurons, {k} above {a}</source>
        <translation>模块 {L} 的前馈网络，位置 {pos} {t}：共 {n} 个神经元，其中 {k} 个高于 {a}</translation>
    </message>
    <message>
        <source>Orange dots: the ten neurons that write the most (activation × norm of the value vector).</source>
        <translation>橙色圆点：写入最多的十个神经元（按激活值 × 值向量范数）。</translation>
    </message>
    <message>
        <source>probability</source>
        <translation>概率</translation>
    </message>
    <message>
        <source>embed</source>
        <translation>嵌入</translation>
    </message>
    <message>
        <source>position (token there)</source>
        <translation>位置（该处的词元）</translation>
    </message>
    <message>
        <source>depth</source>
        <translation>深度</translation>
    </message>
    <message>
        <source>depth (0 = embeddings, then after each block)</source>
        <translation>深度（0 = 嵌入，之后逐模块）</translation>
    </message>
    <message>
        <source>{t} at position {pos}: probability (rank) by depth</source>
        <translation>位置 {pos} 上的 {t}：各深度的概率（排名）</translation>
    </message>
    <message>
        <source>Logit lens: what the residual stream would predict after every block</source>
        <translation>Logit 透镜：每个模块之后，残差流会预测什么</translation>
    </message>
    <message>
        <source>Each cell: the top token if the model stopped there (final LayerNorm + unembedding applied early) and, as colour, its probability; the top row is the real output. #k = rank of the target.</source>
        <translation>每个格子：假如模型在那里停下（提前做最终层归一化 + 反嵌入）时排第一的词元，颜色表示它的概率；最上面一行是真实输出。#k = 目标词元的排名。</translation>
    </message>
    <message>
        <source>norm (‖x‖₂)</source>
        <translation>范数（‖x‖₂）</translation>
    </message>
    <message>
        <source>residual after</source>
        <translation>之后的残差</translation>
    </message>
    <message>
        <source>attention adds</source>
        <translation>注意力加入</translation>
    </message>
    <message>
        <source>MLP adds</source>
        <translation>前馈网络加入</translation>
    </message>
    <message>
        <source>depth (embed = embeddings, then after each block)</source>
        <translation>深度（嵌入 = 嵌入层，之后逐模块）</translation>
    </message>
    <message>
        <source>cosine to final</source>
        <translation>与最终残差的余弦</translation>
    </message>
    <message>
        <source>The residual stream at position {pos} {t}: its size and direction by depth</source>
        <translation>位置 {pos} {t} 的残差流：大小与方向随深度的变化</translation>
    </message>
    <message>
        <source>Top: the norm after each block and of what that block&apos;s attention and MLP added. Bottom: cosine to the final residual (1 = same direction).</source>
        <translation>上图：每个模块之后残差流的范数，以及该模块的注意力和前馈网络所加内容的范数。下图：与最终残差的余弦相似度（1 = 方向相同）。</translation>
    </message>
    <message>
        <source>position (token)</source>
        <translation>位置（词元）</translation>
    </message>
    <message>
        <source>depth (n = after block n−1)</source>
        <translation>深度（n = 模块 n−1 之后）</translation>
    </message>
    <message>
        <source>pushed the target up</source>
        <translation>推高目标</translation>
    </message>
    <message>
        <source>pulled it down</source>
        <translation>压低目标</translation>
    </message>
    <message>
        <source>How “{what}” got its logit at position {pos}: direct contributions by layer and position</source>
        <translation>位置 {pos} 上“{what}”的逻辑值从何而来：按层和位置的直接贡献</translation>
    </message>
    <message>
        <source>Logit {logit:.3f} = the parts + final LayerNorm bias {bias:+.3f}. Edge width ∝ √|contribution|; {dropped} parts at or under {th:.1%} of the total are hidden (the kept ones are {kept:.0%}). Largest source: {head}.</source>
        <translation>逻辑值 {logit:.3f} = 各部分之和 + 最终层归一化的偏置 {bias:+.3f}。边宽 ∝ √|贡献|；有 {dropped} 个部分不超过总量的 {th:.1%}，已隐藏（保留部分占 {kept:.0%}）。最大来源：{head}。</translation>
    </message>
    <message>
        <source>direct contribution to the logit (logit units)</source>
        <translation>对逻辑值的直接贡献（逻辑值单位）</translation>
    </message>
    <message>
        <source>What pushed “{what}” at position {pos} (and what pulled it down)</source>
        <translation>在位置 {pos}，是什么推高了“{what}”（又是什么压低了它）</translation>
    </message>
    <message>
        <source>Direct logit attribution: each part&apos;s write into the residual, read by the final LayerNorm (scale frozen) and the unembedding. Logit {logit:.3f}.</source>
        <translation>直接逻辑值归因：每个部分写入残差流的内容，经最终层归一化（缩放固定）和反嵌入读出。逻辑值 {logit:.3f}。</translation>
    </message>
</context>
<context>
    <name>GraphPanel</name>
    <message>
        <source>target</source>
        <translation>目标</translation>
    </message>
    <message>
        <source>keep nodes</source>
        <translation>保留节点</translation>
    </message>
    <message>
        <source>keep links</source>
        <translation>保留连线</translation>
    </message>
    <message>
        <source>top token</source>
        <translation>最可能的词元</translation>
    </message>
    <message>
        <source>Keep the nodes holding this share of the influence on the logits</source>
        <translation>保留对 logits 影响占这一比例的节点</translation>
    </message>
    <message>
        <source>Keep the links holding this share of the influence</source>
        <translation>保留影响占这一比例的连线</translation>
    </message>
    <message>
        <source>Build graph</source>
        <translation>生成电路图</translation>
    </message>
    <message>
        <source>Cancel</source>
        <translation>取消</translation>
    </message>
    <message>
        <source>Save…</source>
        <translation>保存…</translation>
    </message>
    <message>
        <source>pinned nodes:</source>
        <translation>固定的节点：</translation>
    </message>
    <message>
        <source>Ablate</source>
        <translation>消融</translation>
    </message>
    <message>
        <source>Scale ×</source>
        <translation>缩放 ×</translation>
    </message>
    <message>
        <source>Group as supernode…</source>
        <translation>组合为超节点…</translation>
    </message>
    <message>
        <source>Remove the pinned nodes&apos; writes in the model and compare each target logit&apos;s change with the graph&apos;s prediction</source>
        <translation>在模型中去掉固定节点写入的内容，并把每个目标 logit 的变化与图的预测相比较</translation>
    </message>
    <message>
        <source>Multiply the pinned nodes&apos; writes by this factor in the model and compare each target logit&apos;s change with the graph&apos;s prediction</source>
        <translation>在模型中把固定节点写入的内容乘以这个系数，并把每个目标 logit 的变化与图的预测相比较</translation>
    </message>
    <message>
        <source>Group the pinned nodes into one named box (saved in the graph JSON as circuit-tracer&apos;s supernodes)</source>
        <translation>把固定的节点组合成一个带名字的框（按 circuit-tracer 的超节点格式保存在图 JSON 中）</translation>
    </message>
    <message>
        <source>hover a node for its numbers; click nodes to pin their links; double-click a feature for its page</source>
        <translation>鼠标悬停在节点上查看数值；点击节点固定它的连线；双击一个特征打开它的页面</translation>
    </message>
    <message>
        <source>The answer&apos;s circuit: every MLP is replaced by its transcoder, attention patterns and LayerNorm scales are frozen, and each link is one node&apos;s direct effect on another, from the tokens to the answer&apos;s logits. Needs the model folder&apos;s transcoders/.</source>
        <translation>答案的电路：每个 MLP 换成它的转码器，注意力模式和 LayerNorm 的缩放被冻结，每条连线是一个节点对另一个节点的直接作用，从输入词元一直到答案的 logits。需要模型文件夹里的 transcoders/。</translation>
    </message>
    <message>
        <source>Run prompt A first.</source>
        <translation>请先运行提示 A。</translation>
    </message>
    <message>
        <source>Building the graph…</source>
        <translation>正在生成电路图…</translation>
    </message>
    <message>
        <source>{n} nodes and {e} links kept; replacement score {r:.3f}, completeness score {c:.3f}.</source>
        <translation>保留 {n} 个节点、{e} 条连线；替换得分 {r:.3f}，完整性得分 {c:.3f}。</translation>
    </message>
    <message>
        <source>feature</source>
        <translation>特征</translation>
    </message>
    <message>
        <source>MLP error</source>
        <translation>MLP 误差</translation>
    </message>
    <message>
        <source>token</source>
        <translation>词元</translation>
    </message>
    <message>
        <source>logit</source>
        <translation>logit</translation>
    </message>
    <message>
        <source>, activation {a:.3f}</source>
        <translation>，激活值 {a:.3f}</translation>
    </message>
    <message>
        <source>{kind} {label} at position {pos}{act}; drawn links in {i:+.3f}, out {o:+.3f}</source>
        <translation>位置 {pos} 的{kind} {label}{act}；图中输入连线合计 {i:+.3f}，输出 {o:+.3f}</translation>
    </message>
    <message>
        <source>Pin nodes first: click them in the graph.</source>
        <translation>请先固定节点：在图中点击它们。</translation>
    </message>
    <message>
        <source>Running the model with {n} nodes scaled by {s:g}…</source>
        <translation>正在运行模型，{n} 个节点缩放为 {s:g} 倍…</translation>
    </message>
    <message>
        <source>predicted by the graph</source>
        <translation>图的预测</translation>
    </message>
    <message>
        <source>real (model)</source>
        <translation>实际（模型）</translation>
    </message>
    <message>
        <source>ablated</source>
        <translation>被消融</translation>
    </message>
    <message>
        <source>scaled ×{s:g}</source>
        <translation>被缩放 ×{s:g}</translation>
    </message>
    <message>
        <source>1 node</source>
        <translation>1 个节点</translation>
    </message>
    <message>
        <source>{n} nodes</source>
        <translation>{n} 个节点</translation>
    </message>
    <message>
        <source>{count} {what}: Pearson r = {r}</source>
        <translation>{count}{what}：皮尔逊 r = {r}</translation>
    </message>
    <message>
        <source>{count} {what} inside the model: each target logit&apos;s real change (demeaned, onnxruntime) against the graph&apos;s prediction, (scale − 1) × the nodes&apos; direct effects; Pearson r = {r}.</source>
        <translation>在模型内部{count}{what}：每个目标 logit 的实际变化（去均值，onnxruntime 计算）对比图的预测，即 (缩放 − 1) × 这些节点的直接效应；皮尔逊 r = {r}。</translation>
    </message>
    <message>
        <source> Not scaled (logits): {ids}.</source>
        <translation> 未缩放（logit 节点）：{ids}。</translation>
    </message>
    <message>
        <source>Supernode</source>
        <translation>超节点</translation>
    </message>
    <message>
        <source>Name of the group of {n} nodes:</source>
        <translation>这组 {n} 个节点的名字：</translation>
    </message>
    <message>
        <source>Save the graph</source>
        <translation>保存电路图</translation>
    </message>
    <message>
        <source>Graph JSON (*.json);;PNG image (*.png);;SVG image (*.svg)</source>
        <translation>电路图 JSON (*.json);;PNG 图片 (*.png);;SVG 图片 (*.svg)</translation>
    </message>
    <message>
        <source>could not write {path}</source>
        <translation>无法写入 {path}</translation>
    </message>
</context>
<context>
    <name>InterventionChips</name>
    <message>
        <source>No interventions. Right-click a block, a head or a neuron to ablate it.</source>
        <translation>没有干预。右键点击一个模块、一个注意力头或一个神经元即可将其消融。</translation>
    </message>
    <message>
        <source>Interventions in force:</source>
        <translation>生效的干预：</translation>
    </message>
    <message>
        <source>click to remove this intervention</source>
        <translation>点击移除此干预</translation>
    </message>
    <message>
        <source>Remove all</source>
        <translation>全部移除</translation>
    </message>
</context>
<context>
    <name>Interventions</name>
    <message>
        <source>zero</source>
        <translation>置零</translation>
    </message>
    <message>
        <source>mean</source>
        <translation>均值</translation>
    </message>
    <message>
        <source>ablate head {layer}.{head} ({mode})</source>
        <translation>消融注意力头 {layer}.{head}（{mode}）</translation>
    </message>
    <message>
        <source>ablate neuron {layer}.{neuron} (= {value:g})</source>
        <translation>消融神经元 {layer}.{neuron}（= {value:g}）</translation>
    </message>
    <message>
        <source>ablate block {layer} attention ({mode})</source>
        <translation>消融模块 {layer} 的注意力（{mode}）</translation>
    </message>
    <message>
        <source>ablate block {layer} MLP ({mode})</source>
        <translation>消融模块 {layer} 的 MLP（{mode}）</translation>
    </message>
    <message>
        <source>head {head}</source>
        <translation>注意力头 {head}</translation>
    </message>
    <message>
        <source>patch {site} of block {layer} at position {position} from B</source>
        <translation>修补模块 {layer} 在位置 {position} 的 {site}（来自另一次运行）</translation>
    </message>
    <message>
        <source>feature {layer}.{feature} set to {value:g} at position {position}</source>
        <translation>特征 {layer}.{feature} 在位置 {position} 设为 {value:g}</translation>
    </message>
    <message>
        <source>feature {layer}.{feature} ×{scale:g}</source>
        <translation>特征 {layer}.{feature} ×{scale:g}</translation>
    </message>
    <message>
        <source>steer block {layer} input (×{scale:g})</source>
        <translation>引导模块 {layer} 的输入（×{scale:g}）</translation>
    </message>
    <message>
        <source>edit block {layer} MLP: {label}</source>
        <translation>编辑第 {layer} 块 MLP：{label}</translation>
    </message>
    <message>
        <source>no interventions</source>
        <translation>无干预</translation>
    </message>
    <message>
        <source>Ablate head {layer}.{head} (zero)</source>
        <translation>消融注意力头 {layer}.{head}（置零）</translation>
    </message>
    <message>
        <source>Ablate head {layer}.{head} (mean)</source>
        <translation>消融注意力头 {layer}.{head}（均值）</translation>
    </message>
    <message>
        <source>Ablate neuron {layer}.{neuron} (zero)</source>
        <translation>消融神经元 {layer}.{neuron}（置零）</translation>
    </message>
    <message>
        <source>Ablate neuron {layer}.{neuron} (mean: {value:.3f})</source>
        <translation>消融神经元 {layer}.{neuron}（均值：{value:.3f}）</translation>
    </message>
    <message>
        <source>attention</source>
        <translation>注意力</translation>
    </message>
    <message>
        <source>MLP</source>
        <translation>MLP</translation>
    </message>
    <message>
        <source>Ablate block {layer} {part} ({mode})</source>
        <translation>消融模块 {layer} 的{part}（{mode}）</translation>
    </message>
    <message>
        <source>Remove all interventions ({n})</source>
        <translation>移除全部干预（{n} 个）</translation>
    </message>
</context>
<context>
    <name>Journey</name>
    <message>
        <source>“{token}”</source>
        <translation>“{token}”</translation>
    </message>
    <message>
        <source>, </source>
        <translation>、</translation>
    </message>
    <message>
        <source>The text you typed</source>
        <translation>你输入的文字</translation>
    </message>
    <message>
        <source>Cutting the text into tokens</source>
        <translation>把文字切成词元</translation>
    </message>
    <message>
        <source>From an id to a vector: the token embedding</source>
        <translation>从编号到向量：词元嵌入</translation>
    </message>
    <message>
        <source>Where it stands: the position embedding</source>
        <translation>它站在哪里：位置编码</translation>
    </message>
    <message>
        <source>Attention: reading the earlier tokens</source>
        <translation>注意力：回头读前面的词元</translation>
    </message>
    <message>
        <source>The MLP: a memory that writes</source>
        <translation>前馈网络：会写入的记忆</translation>
    </message>
    <message>
        <source>The residual stream adds it all up</source>
        <translation>残差流：把一切累加起来</translation>
    </message>
    <message>
        <source>Block after block: when does the answer appear?</source>
        <translation>一层又一层：答案何时浮现？</translation>
    </message>
    <message>
        <source>The LM head and softmax: scores for every token</source>
        <translation>LM 头与 Softmax：给每个词元打分</translation>
    </message>
    <message>
        <source>Choosing the next token</source>
        <translation>选出下一个词元</translation>
    </message>
    <message>
        <source>Appending it, and the KV cache</source>
        <translation>追加到文本末尾，以及 KV 缓存</translation>
    </message>
    <message>
        <source>The circuit behind the answer</source>
        <translation>答案的电路</translation>
    </message>
    <message>
        <source>The next round</source>
        <translation>下一轮</translation>
    </message>
    <message>
        <source>{number}. {title}</source>
        <translation>{number}. {title}</translation>
    </message>
    <message>
        <source>The model is given {text}: {n_chars} characters, {n_bytes} bytes of UTF-8. It never sees letters. Everything that follows is arithmetic on numbers made from these bytes, and no single number in the model stores the answer: the answer is where a long path of additions and multiplications ends.</source>
        <translation>模型收到的是 {text}：{n_chars} 个字符，UTF-8 编码下共 {n_bytes} 个字节。模型从不“看见”文字本身，接下来的每一步都只是对这些字节所变成的数字做算术。模型里也没有哪一个数单独存着答案：答案是一长串加法和乘法走到尽头时落下的地方。</translation>
    </message>
    <message>
        <source>{token} = {id}</source>
        <translation>{token} = {id}</translation>
    </message>
    <message>
        <source>Byte-pair encoding cut the {n_bytes} bytes into {n_tokens} tokens, each an id in a fixed vocabulary: {rows}. A leading space belongs to the token that follows it (shown as ␣; {n_space} of these tokens start with one): {word} becomes {n_pieces} pieces {pieces}, while {spaced_word} is the single token {spaced}. The model can read at most {n_positions} tokens.</source>
        <translation>字节对编码（BPE）把这 {n_bytes} 个字节切成了 {n_tokens} 个词元，每个词元都是固定词表里的一个编号：{rows}。词前的空格属于紧随其后的那个词元（显示为 ␣；这里有 {n_space} 个词元以空格开头）：{word} 被切成 {n_pieces} 块 {pieces}，而 {spaced_word} 却只是一个词元 {spaced}。模型一次最多能读 {n_positions} 个词元。</translation>
    </message>
    <message>
        <source>{n} tokens hold only part of a character: byte-level BPE splits a Chinese character&apos;s three UTF-8 bytes wherever its vocabulary has no whole piece.</source>
        <translation>其中 {n} 个词元只装着某个字符的一部分：一个汉字在 UTF-8 里占三个字节，词表里没有整字时，字节级 BPE 就会把它拆开。</translation>
    </message>
    <message>
        <source>{token} ({cos:.3f})</source>
        <translation>{token}（{cos:.3f}）</translation>
    </message>
    <message>
        <source>The id of {token} picks one row of a {vocab:,} × {n_embd} table: {n_embd} learned numbers (norm {norm:.2f}). Nothing in the id means anything; the row does. Its nearest rows by cosine are {near}.</source>
        <translation>{token} 的编号从一张 {vocab:,} × {n_embd} 的表里取出一行：{n_embd} 个训练得来的数（范数 {norm:.2f}）。编号本身没有任何含义，有含义的是这一行向量。按余弦相似度，离它最近的几行是 {near}。</translation>
    </message>
    <message>
        <source>Directions in this space carry meaning: {a} − {b} + {c} lands nearest to {result} (try your own words in the analogy box).</source>
        <translation>这个空间里的方向是有意义的：{a} − {b} + {c} 落在离 {result} 最近的地方（可以在类比框里换上你自己的词试试）。</translation>
    </message>
    <message>
        <source>Order matters (“France’s capital” is not “capital’s France”), yet the token vector does not know where it stands. A second table, one row for each of the {n_positions} positions, adds where: position {position} adds a vector of norm {pos_norm:.2f} to {token}’s {token_norm:.2f}. Their sum, norm {sum_norm:.2f}, is the residual stream that enters block 0.</source>
        <translation>顺序很重要（“法国的首都”和“首都的法国”不是一回事），可词元向量自己并不知道它排在第几。于是有了第二张表，{n_positions} 个位置各占一行，用来补上“在哪里”：位置 {position} 给 {token}（范数 {token_norm:.2f}）加上一个范数为 {pos_norm:.2f} 的向量。两者之和的范数为 {sum_norm:.2f}，它就是进入第 0 个模块的残差流。</translation>
    </message>
    <message>
        <source>{token} at position {pos} ({weight:.0%})</source>
        <translation>位置 {pos} 的 {token}（{weight:.0%}）</translation>
    </message>
    <message>
        <source>In each block, {n_head} attention heads let every token read the tokens before it. Each token makes a query (what it looks for), a key (what it offers) and a value (what it passes on); a query’s dot products with the keys, through softmax, become weights that sum to 1. Here, in block {layer}, head {head} of {token} (position {position}) puts its weight on {keys} (entropy {entropy:.2f} nats). Attention moves information between positions; it does not yet say the answer.</source>
        <translation>每个模块里有 {n_head} 个注意力头，让每个词元都能回头读它前面的词元。每个词元生成一个查询（它在找什么）、一个键（它能提供什么）和一个值（它要传出去的内容）；查询与各个键做点积，经过 Softmax，变成加起来等于 1 的权重。在第 {layer} 个模块里，{token}（位置 {position}）的头 {head} 把权重放在了 {keys} 上（熵 {entropy:.2f} 奈特）。注意力负责在位置之间搬运信息，它本身还没有说出答案。</translation>
    </message>
    <message>
        <source>#{neuron} ({act:+.2f})</source>
        <translation>#{neuron}（{act:+.2f}）</translation>
    </message>
    <message>
        <source>{token} ({value:+.2f})</source>
        <translation>{token}（{value:+.2f}）</translation>
    </message>
    <message>
        <source>After attention, the MLP of block {layer} works like a memory of {d_mlp:,} entries. Each neuron’s input weights are a key: it fires when the residual matches a pattern. Its output weights are a value: what it writes back when it fires. For {token}, {n_active} neurons fire; the biggest writers are {top}. Neuron #{neuron}, read through the unembedding, writes towards {writes}; the MLP as a whole promotes {promotes}.</source>
        <translation>注意力之后，第 {layer} 个模块的前馈网络（MLP）像一块有 {d_mlp:,} 个条目的记忆。每个神经元的输入权重是一把“键”：残差流与某种模式吻合时，它就被激活；它的输出权重是“值”：激活后写回残差流的内容。对 {token} 来说，有 {n_active} 个神经元被激活，写入最多的是 {top}。把神经元 #{neuron} 经反嵌入读出来，它写向 {writes}；整个前馈网络推高的是 {promotes}。</translation>
    </message>
    <message>
        <source>Attention and the MLP never replace the vector: each adds its output to it (a residual connection). The sum, the residual stream, grows from norm {start:.2f} to {end:.2f} over {n_layer} blocks; the largest attention write is in block {attn_layer} ({attn:.2f}), the largest MLP write in block {mlp_layer} ({mlp:.2f}). Its direction settles early: cosine to the final residual {cos0:.2f} at the start, {cos_mid:.2f} half-way. Each block has a layer normalization before its attention and before its MLP: they read a normalised copy, the stream itself is only added to.</source>
        <translation>注意力和前馈网络从不替换这个向量，而是把各自的输出加到它上面（残差连接）。这个不断累加的和就是残差流：经过 {n_layer} 个模块，它的范数从 {start:.2f} 增长到 {end:.2f}；注意力写入最多的是第 {attn_layer} 个模块（{attn:.2f}），前馈网络写入最多的是第 {mlp_layer} 个模块（{mlp:.2f}）。它的方向很早就基本定下来了：与最终残差的余弦相似度起初为 {cos0:.2f}，走到一半时为 {cos_mid:.2f}。每个模块在注意力和前馈网络之前各有一次层归一化：它们读的是归一化后的副本，残差流本身只会被累加。</translation>
    </message>
    <message>
        <source>it is the lens’s top token only at the very end</source>
        <translation>它直到最后才成为透镜里排第一的词元</translation>
    </message>
    <message>
        <source>it is already the top token straight after the embeddings</source>
        <translation>刚过嵌入层，它就已经排在第一</translation>
    </message>
    <message>
        <source>it becomes the top token after block {layer} and stays there</source>
        <translation>从第 {layer} 个模块之后，它升到第一并一直保持</translation>
    </message>
    <message>
        <source>The logit lens reads the residual after every block as if the model stopped there (final layer normalization and unembedding applied early). For the model’s answer {target}, the probability by depth is {probs}: {when}. The {n_layer} blocks do not look the answer up in one place; they push the vector towards it a little at a time.</source>
        <translation>Logit 透镜在每个模块之后读一次残差流，假装模型就在那里停下（提前做最终的层归一化和反嵌入）。对模型的答案 {target}，各深度的概率依次是 {probs}：{when}。这 {n_layer} 个模块并不是在某一处把答案查出来，而是一点一点把向量推向它。</translation>
    </message>
    <message>
        <source>{token}: logit {logit:.2f} → {prob:.1%}</source>
        <translation>{token}：逻辑值 {logit:.2f} → {prob:.1%}</translation>
    </message>
    <message>
        <source>After a final layer normalization, the LM head multiplies the last position’s {n_embd} numbers by the embedding table again (the weights are shared) and gets one score, a logit, for each of the {vocab:,} tokens. Only the last position has seen the whole text, so only it chooses. Softmax turns the logits into probabilities that sum to 1: {top}. Entropy {entropy:.2f} nats (0 = certain, {max_entropy:.1f} = no idea).</source>
        <translation>经过最后一次层归一化后，LM 头把最后一个位置的 {n_embd} 个数再乘一次嵌入表（权重是共享的），为 {vocab:,} 个词元各算出一个分数，即逻辑值（logit）。只有最后一个位置看过完整的文本，所以只由它来做选择。Softmax 把逻辑值变成加起来等于 1 的概率：{top}。熵为 {entropy:.2f} 奈特（0 表示确定无疑，{max_entropy:.1f} 表示毫无头绪）。</translation>
    </message>
    <message>
        <source>temperature 0 is greedy decoding: always the most likely token</source>
        <translation>温度为 0 即贪婪解码：总是选概率最高的词元</translation>
    </message>
    <message>
        <source>temperature {t:.2f} (below 1 sharpens, above 1 flattens), top-k {k} (keep the k most likely), top-p {p:.2f} (keep the smallest set whose probabilities reach p), seed {seed}</source>
        <translation>温度 {t:.2f}（小于 1 让分布更尖，大于 1 让分布更平），Top-k {k}（只留概率最高的 k 个），Top-p {p:.2f}（只留概率累计达到 p 的最小集合），随机种子 {seed}</translation>
    </message>
    <message>
        <source>off</source>
        <translation>关闭</translation>
    </message>
    <message>
        <source>The probabilities are not the choice yet. The settings say how to draw: {rule}. {kept:,} of {vocab:,} tokens remain; the next step takes {token}</source>
        <translation>概率还不等于选择，采样设置决定怎么抽：{rule}。{vocab:,} 个词元里剩下 {kept:,} 个；下一步会取 {token}</translation>
    </message>
    <message>
        <source> ({final:.1%} after the settings, {raw:.1%} as the model gave it)</source>
        <translation>（按当前设置为 {final:.1%}，模型原始给出 {raw:.1%}）</translation>
    </message>
    <message>
        <source>. Move the sliders of the next-token chart: this page and the chart follow at once, without running the model again.</source>
        <translation>。拖动“下一个词元”图旁的滑块：这一页和图表会立即跟着变化，无需重新运行模型。</translation>
    </message>
    <message>
        <source>The chosen token is appended and the whole path runs again, but only for that one new token: the keys and values of the earlier tokens are kept, the KV cache. It costs {per_token:.0f} KB per token ({n_layer} layers × keys and values × {n_embd} numbers × 4 bytes): {now:.2f} MB for these {n_tokens} tokens, {full:.1f} MB at the full context of {n_positions}. Memory grows with the text; that is why long contexts are expensive.</source>
        <translation>选中的词元被追加到末尾，整条路径再走一遍，但只为这一个新词元而走：前面词元的键和值都被保存下来，这就是 KV 缓存。每个词元占 {per_token:.0f} KB（{n_layer} 层 × 键和值 × {n_embd} 个数 × 4 字节）：现在这 {n_tokens} 个词元共 {now:.2f} MB，写满 {n_positions} 的上下文时是 {full:.1f} MB。内存随文本增长，这正是长上下文代价高昂的原因。</translation>
    </message>
    <message>
        <source>With {token} appended, the text is {n_tokens} tokens long and position {position} becomes the newest: the journey starts again from its embedding, and so on, token by token, until the context of {n_positions} is full or you stop. Press Step (Space) to take this step, then walk the journey again on the new text.</source>
        <translation>追加 {token} 之后，文本长 {n_tokens} 个词元，位置 {position} 成为最新的位置：旅程从它的嵌入重新开始，如此一个词元接一个词元，直到 {n_positions} 的上下文写满，或者你喊停。按“单步”（空格键）走出这一步，然后在新文本上再走一遍旅程。</translation>
    </message>
    <message>
        <source>Since the answer is the end of a path of numbers, it can be changed by changing a few of them: Edit this fact… below makes {subject} continue with {target} after {prompt} by a rank-one change of one MLP&apos;s output weight (ROME). The chart&apos;s ghosts, the causal trace and the Path view then show the model before and after the edit.</source>
        <translation>既然答案是一条数字路径的终点，改动其中少数几个数字就能改变它：下面的“编辑这个事实…”通过对一个 MLP 输出权重做秩一修改（ROME），让 {prompt} 中的 {subject} 接上 {target}。之后，图表的幽灵条、因果追踪和路径视图会同时显示编辑前后的模型。</translation>
    </message>
    <message>
        <source>#{feature} {label} ({value:.2f})</source>
        <translation>#{feature} {label}（{value:.2f}）</translation>
    </message>
    <message>
        <source>One neuron rarely means one thing. A sparse autoencoder reads the same block’s input as a few of thousands of features instead, each with a meaning one can look up: here the strongest are {items}. Each label gives the tokens a feature fires on, then the token it pushes towards (Features tab).</source>
        <translation>一个神经元很少只表示一件事。稀疏自编码器换一种读法：把同一个模块的输入读成几千个特征中的少数几个，每个特征都有可以查到的含义：这里最强的是 {items}。每个标签先写特征在哪些词元上激活，再写它把预测推向哪个词元（见“特征”标签页）。</translation>
    </message>
    <message>
        <source>The pages so far followed one token&apos;s vector. An attribution graph follows the answer instead: each block&apos;s MLP is replaced by a transcoder, a sparse stand-in whose features can be read, and every link between the prompt&apos;s tokens, those features and the answer&apos;s logit is a direct effect through the frozen attention and residual stream. Only the links that carry most of the answer are kept.</source>
        <translation>前面的页面跟随的是一个词元的向量。归因图换一种方式，跟随的是答案本身：每个模块的 MLP 换成一个转码器（一个稀疏的替身，它的特征可以读懂），提示词的词元、这些特征和答案的逻辑值之间的每一条连线，都是经过冻结的注意力和残差流的直接效应。只保留承载了答案大部分的连线。</translation>
    </message>
    <message>
        <source>This model folder ships no transcoders, so its graph cannot be built here (train them with gpt2viz train-sae --transcoder).</source>
        <translation>这个模型文件夹没有自带转码器，所以这里无法构建它的图（可用 gpt2viz train-sae --transcoder 训练）。</translation>
    </message>
    <message>
        <source>Build the circuit graph below (or Analysis → Circuit graph): this page will then say what carries the answer.</source>
        <translation>点击下方的“构建电路图”（或 分析 → 电路图）：之后本页会说明是什么承载了答案。</translation>
    </message>
    <message>
        <source>block {layer} feature {feature} ({label}, {weight:+.2f})</source>
        <translation>模块 {layer} 的特征 {feature}（{label}，{weight:+.2f}）</translation>
    </message>
    <message>
        <source>what block {layer}&apos;s transcoder misses ({weight:+.2f})</source>
        <translation>模块 {layer} 的转码器遗漏的部分（{weight:+.2f}）</translation>
    </message>
    <message>
        <source>the token {token} itself ({weight:+.2f})</source>
        <translation>词元 {token} 本身（{weight:+.2f}）</translation>
    </message>
    <message>
        <source>For this prompt the graph keeps {nodes} nodes and {links} links; the transcoders account for {replacement:.0%} of the answer&apos;s path (replacement score) and {completeness:.0%} of each node&apos;s inputs (completeness). The strongest direct inputs to {target} are {inputs}. In the Circuit graph tab, hover a node for its numbers, double-click a feature for its page, or ablate pinned nodes to check the graph against the model.</source>
        <translation>对这段提示词，图保留了 {nodes} 个节点和 {links} 条连线；转码器解释了答案路径的 {replacement:.0%}（替换分数）和每个节点输入的 {completeness:.0%}（完整度）。对 {target} 最强的直接输入是 {inputs}。在“电路图”标签页中，鼠标悬停在节点上可查看数值，双击特征可打开它的页面，也可以消融固定的节点，用模型检验这张图。</translation>
    </message>
</context>
<context>
    <name>JourneyPanel</name>
    <message>
        <source>◀ Back</source>
        <translation>◀ 上一页</translation>
    </message>
    <message>
        <source>Next ▶</source>
        <translation>下一页 ▶</translation>
    </message>
    <message>
        <source>Previous page (PgUp or Alt+←)</source>
        <translation>上一页（PgUp 或 Alt+←）</translation>
    </message>
    <message>
        <source>Next page (PgDown or Alt+→)</source>
        <translation>下一页（PgDown 或 Alt+→）</translation>
    </message>
    <message>
        <source>Edit this fact…</source>
        <translation>编辑这个事实…</translation>
    </message>
    <message>
        <source>Open Edit a fact (ROME) with this prompt, its subject and a new answer</source>
        <translation>用这个提示、它的主语和一个新答案打开“编辑事实（ROME）”</translation>
    </message>
    <message>
        <source>Build the circuit graph</source>
        <translation>构建电路图</translation>
    </message>
    <message>
        <source>Open Analysis → Circuit graph and build the graph of this prompt</source>
        <translation>打开 分析 → 电路图，并构建这段提示词的图</translation>
    </message>
    <message>
        <source>page {i} of {n}</source>
        <translation>第 {i} 页，共 {n} 页</translation>
    </message>
    <message>
        <source>Run a prompt first: the journey tells the story of your own text, with its numbers.</source>
        <translation>请先运行一段提示词：旅程讲述的是你自己输入的文字，用的是它的真实数字。</translation>
    </message>
</context>
<context>
    <name>LensView</name>
    <message>
        <source>target token (default: the token the model chose next)</source>
        <translation>目标词元（默认：模型接下来选中的词元）</translation>
    </message>
    <message>
        <source>depth (0 = embeddings, then after each block)</source>
        <translation>深度（0 = 嵌入，之后逐模块）</translation>
    </message>
    <message>
        <source>probability</source>
        <translation>概率</translation>
    </message>
    <message>
        <source>Run a prompt to see the logit lens.</source>
        <translation>运行一段提示词，即可查看 Logit 透镜。</translation>
    </message>
    <message>
        <source>embed</source>
        <translation>嵌入</translation>
    </message>
    <message>
        <source>block {layer}</source>
        <translation>模块 {layer}</translation>
    </message>
    <message>
        <source>after the embeddings</source>
        <translation>嵌入之后</translation>
    </message>
    <message>
        <source>after block {layer}</source>
        <translation>模块 {layer} 之后</translation>
    </message>
    <message>
        <source>{where}, position {pos} predicts {token} ({prob:.1%})</source>
        <translation>{where}，位置 {pos} 预测 {token}（{prob:.1%}）</translation>
    </message>
    <message>
        <source> Showing the newest {n} of {total} positions.</source>
        <translation> 只显示 {total} 个位置中最新的 {n} 个。</translation>
    </message>
    <message>
        <source>Each cell: the token the residual stream would predict if the model stopped after that block (final LayerNorm + unembedding applied early), and its probability. The last row is the model&apos;s real output. Click a column to select that position.</source>
        <translation>每个格子：假如模型在该模块之后就停下（提前做最终层归一化和反嵌入），残差流会预测的词元及其概率。最后一行是模型的真实输出。点击某一列即可选中该位置。</translation>
    </message>
    <message>
        <source>{target} at position {pos} {token}</source>
        <translation>{target}，位置 {pos} {token}</translation>
    </message>
    <message>
        <source>rank by depth (0 = top): {ranks}</source>
        <translation>各深度的排名（0 = 第一）：{ranks}</translation>
    </message>
    <message>
        <source> · “{text}” is {n} tokens; using the default</source>
        <translation> · “{text}”是 {n} 个词元；改用默认目标</translation>
    </message>
    <message>
        <source>with the interventions (solid) vs without (dashed): rank {ranks}; Δp {deltas}</source>
        <translation>有干预（实线）与无干预（虚线）：排名 {ranks}；Δp {deltas}</translation>
    </message>
</context>
<context>
    <name>MainWindow</name>
    <message>
        <source>gpt2viz — the life of a token in GPT-2</source>
        <translation>gpt2viz —— GPT-2 中一个词元的一生</translation>
    </message>
    <message>
        <source>Type a prompt, then Run (Ctrl+Enter)</source>
        <translation>输入提示词，然后点“运行”（Ctrl+Enter）</translation>
    </message>
    <message>
        <source>Model</source>
        <translation>模型</translation>
    </message>
    <message>
        <source>Prompt</source>
        <translation>提示词</translation>
    </message>
    <message>
        <source>Tokens — click one to follow that position; generated tokens are green</source>
        <translation>词元 —— 点击一个词元即可跟踪该位置；生成的词元显示为绿色</translation>
    </message>
    <message>
        <source>Pipeline — the path the selected token travels; click a stage</source>
        <translation>流水线 —— 选中的词元所走的路径；点击某个阶段查看详情</translation>
    </message>
    <message>
        <source>Running…</source>
        <translation>运行中…</translation>
    </message>
    <message>
        <source>Run</source>
        <translation>运行</translation>
    </message>
    <message>
        <source>&amp;Model</source>
        <translation>模型(&amp;M)</translation>
    </message>
    <message>
        <source>&amp;Export</source>
        <translation>导出(&amp;E)</translation>
    </message>
    <message>
        <source>&amp;Language</source>
        <translation>语言(&amp;L)</translation>
    </message>
    <message>
        <source>&amp;Journey</source>
        <translation>旅程(&amp;J)</translation>
    </message>
    <message>
        <source>&amp;Analysis</source>
        <translation>分析(&amp;A)</translation>
    </message>
    <message>
        <source>Compare A and B</source>
        <translation>比较 A 与 B</translation>
    </message>
    <message>
        <source>&amp;Compare with a second prompt (B)</source>
        <translation>与第二个提示 (B) 比较(&amp;C)</translation>
    </message>
    <message>
        <source>Activation &amp;patching (A clean, B corrupted)</source>
        <translation>激活修补（A 干净，B 破坏）(&amp;P)</translation>
    </message>
    <message>
        <source>Causal &amp;trace of A (ROME)</source>
        <translation>A 的因果追踪（ROME）(&amp;T)</translation>
    </message>
    <message>
        <source>Circuit &amp;graph of A (transcoders)</source>
        <translation>A 的电路图（转码器）(&amp;G)</translation>
    </message>
    <message>
        <source>&amp;Edit a fact (ROME)…</source>
        <translation>编辑一条事实（ROME）(&amp;E)…</translation>
    </message>
    <message>
        <source>&amp;Remove every intervention</source>
        <translation>移除所有干预(&amp;R)</translation>
    </message>
    <message>
        <source>Guided journey</source>
        <translation>导览旅程</translation>
    </message>
    <message>
        <source>&amp;Open model folder…</source>
        <translation>打开模型文件夹(&amp;O)…</translation>
    </message>
    <message>
        <source>&amp;Get GPT-2…</source>
        <translation>获取 GPT-2(&amp;G)…</translation>
    </message>
    <message>
        <source>&amp;Quit</source>
        <translation>退出(&amp;Q)</translation>
    </message>
    <message>
        <source>Export &amp;view as PNG or SVG…</source>
        <translation>将视图导出为 PNG 或 SVG(&amp;V)…</translation>
    </message>
    <message>
        <source>Export &amp;all layers…</source>
        <translation>导出所有层(&amp;A)…</translation>
    </message>
    <message>
        <source>Export &amp;data (every hook, .npz + .json)…</source>
        <translation>导出数据（全部钩子，.npz + .json）(&amp;D)…</translation>
    </message>
    <message>
        <source>Save &amp;edited model (the ROME edits in force)…</source>
        <translation>保存编辑后的模型（当前生效的 ROME 编辑）(&amp;E)…</translation>
    </message>
    <message>
        <source>&amp;Guided journey through the stages</source>
        <translation>逐阶段导览旅程(&amp;G)</translation>
    </message>
    <message>
        <source>One page per stage of the token&apos;s life, with your prompt&apos;s numbers (PgDown / PgUp to turn pages)</source>
        <translation>词元一生的每个阶段一页，用的是你的提示词的数字（PgDown / PgUp 翻页）</translation>
    </message>
    <message>
        <source>No font for Chinese characters was found: CJK text and tokens will show as boxes. Install a CJK font (Debian/Ubuntu: fonts-noto-cjk).</source>
        <translation>未找到可显示汉字的字体：中日韩文字和词元会显示成方框。请安装一种 CJK 字体（Debian/Ubuntu：fonts-noto-cjk）。</translation>
    </message>
    <message>
        <source>&amp;Report… (the next token&apos;s whole journey, PDF or HTML)</source>
        <translation>报告（下一个词元的完整旅程，PDF 或 HTML）(&amp;R)…</translation>
    </message>
    <message>
        <source>Patching, causal trace and circuit graph</source>
        <translation>激活修补、因果追踪与电路图</translation>
    </message>
    <message>
        <source>Dark &amp;figures</source>
        <translation>深色图表(&amp;F)</translation>
    </message>
    <message>
        <source>Export the journey report</source>
        <translation>导出旅程报告</translation>
    </message>
    <message>
        <source>PDF document (*.pdf);;HTML page (*.html)</source>
        <translation>PDF 文档 (*.pdf);;HTML 网页 (*.html)</translation>
    </message>
    <message>
        <source>Writing the report…</source>
        <translation>正在生成报告…</translation>
    </message>
    <message>
        <source>saved {0}</source>
        <translation>已保存 {0}</translation>
    </message>
    <message>
        <source>Export {view} as PNG or SVG…</source>
        <translation>将“{view}”导出为 PNG 或 SVG…</translation>
    </message>
    <message>
        <source>Export all layers…</source>
        <translation>导出所有层…</translation>
    </message>
    <message>
        <source>Export data (.npz)…</source>
        <translation>导出数据（.npz）…</translation>
    </message>
    <message>
        <source>No model is loaded: open a model folder from the Model menu.</source>
        <translation>尚未加载模型：请从“模型”菜单打开一个模型文件夹。</translation>
    </message>
    <message>
        <source>Open a gpt2viz model folder</source>
        <translation>打开 gpt2viz 模型文件夹</translation>
    </message>
    <message>
        <source>Run a prompt first: there is nothing to export yet.</source>
        <translation>请先运行一段提示词：现在还没有可导出的内容。</translation>
    </message>
    <message>
        <source>The export did not finish: {reason}

No partial file was left behind; files that were there before are unchanged.</source>
        <translation>导出未完成：{reason}

没有留下不完整的文件；原有的文件保持不变。</translation>
    </message>
    <message>
        <source>Export {view}</source>
        <translation>导出“{view}”</translation>
    </message>
    <message>
        <source>PNG image (*.png);;SVG drawing (*.svg)</source>
        <translation>PNG 图像 (*.png);;SVG 矢量图 (*.svg)</translation>
    </message>
    <message>
        <source>saved {path}</source>
        <translation>已保存 {path}</translation>
    </message>
    <message>
        <source>Export every layer of {view} into…</source>
        <translation>将“{view}”的每一层导出到…</translation>
    </message>
    <message>
        <source>Replace files?</source>
        <translation>替换文件？</translation>
    </message>
    <message>
        <source>{folder} already holds {n} exported files; replace those with the same names?</source>
        <translation>{folder} 中已有 {n} 个导出文件；要替换同名文件吗？</translation>
    </message>
    <message>
        <source>Exporting {n} layers of {view}…</source>
        <translation>正在导出“{view}”的 {n} 层…</translation>
    </message>
    <message>
        <source>Save the edited model as a new folder</source>
        <translation>把编辑后的模型保存为新文件夹</translation>
    </message>
    <message>
        <source>saving the edited model to {path}…</source>
        <translation>正在把编辑后的模型保存到 {path}…</translation>
    </message>
    <message>
        <source>saved the edited model to {path} (open it from Model → Open model folder)</source>
        <translation>已把编辑后的模型保存到 {path}（可从 模型 → 打开模型文件夹 打开）</translation>
    </message>
    <message>
        <source>Cancel</source>
        <translation>取消</translation>
    </message>
    <message>
        <source>Nothing to export yet: {why}.</source>
        <translation>暂时没有可导出的内容：{why}。</translation>
    </message>
    <message>
        <source>saved {n} images, a contact sheet and index.json in {folder}</source>
        <translation>已在 {folder} 中保存 {n} 张图、一张总览图和 index.json</translation>
    </message>
    <message>
        <source>Export data</source>
        <translation>导出数据</translation>
    </message>
    <message>
        <source>NumPy archive (*.npz)</source>
        <translation>NumPy 归档 (*.npz)</translation>
    </message>
    <message>
        <source>saved {npz} and {json}</source>
        <translation>已保存 {npz} 和 {json}</translation>
    </message>
    <message>
        <source>reading the prompt: {done} / {total} tokens</source>
        <translation>正在读取提示词：{done} / {total} 个词元</translation>
    </message>
    <message>
        <source>A long prompt is read in chunks; Reset or a new prompt cancels it</source>
        <translation>长提示词分块读取；“重置”或新的提示词会取消它</translation>
    </message>
    <message>
        <source>no model</source>
        <translation>无模型</translation>
    </message>
    <message>
        <source>{name} · {params:.1f}M params · {n_layer} layers × {n_head} heads · context {used}/{n_positions} · KV cache {kv:.2f} MB · last step {ms:.1f} ms</source>
        <translation>{name} · {params:.1f}M 参数 · {n_layer} 层 × {n_head} 头 · 上下文 {used}/{n_positions} · KV 缓存 {kv:.2f} MB · 上一步 {ms:.1f} ms</translation>
    </message>
    <message>
        <source> · running…</source>
        <translation> · 运行中…</translation>
    </message>
    <message>
        <source>Exporting GPT-2 (124M): download, ONNX export, validation…</source>
        <translation>正在导出 GPT-2（124M）：下载、ONNX 导出、校验…</translation>
    </message>
    <message>
        <source>Get GPT-2</source>
        <translation>获取 GPT-2</translation>
    </message>
    <message>
        <source>the export failed</source>
        <translation>导出失败</translation>
    </message>
    <message>
        <source>Could not get GPT-2: {error}

Without network: download &apos;openai-community/gpt2&apos; (config.json, model.safetensors, tokenizer.json) on another machine, then run `gpt2viz export &lt;that folder&gt; --out {out}`. The export needs `pip install &apos;gpt2viz[export]&apos;`.</source>
        <translation>无法获取 GPT-2：{error}

没有网络时：在另一台机器上下载 &apos;openai-community/gpt2&apos;（config.json、model.safetensors、tokenizer.json），然后运行 `gpt2viz export &lt;该文件夹&gt; --out {out}`。导出需要先 `pip install &apos;gpt2viz[export]&apos;`。</translation>
    </message>
</context>
<context>
    <name>MlpView</name>
    <message>
        <source>neuron</source>
        <translation>神经元</translation>
    </message>
    <message>
        <source>activation (after GELU)</source>
        <translation>激活值（GELU 之后）</translation>
    </message>
    <message>
        <source>activation</source>
        <translation>激活值</translation>
    </message>
    <message>
        <source>× ‖value‖</source>
        <translation>× ‖值‖</translation>
    </message>
    <message>
        <source>Run a prompt to see the MLP neurons.</source>
        <translation>运行一段提示词，即可查看前馈网络的神经元。</translation>
    </message>
    <message>
        <source>Layer {layer}, position {pos} {token}: {n:,} neurons, {active} above {threshold}. Each neuron is a key (its input weights decide when it fires) and a value (its output weights: what it adds to the residual). Orange: the biggest writers. Click one to read its value as tokens.</source>
        <translation>第 {layer} 层，位置 {pos} {token}：共 {n:,} 个神经元，其中 {active} 个高于 {threshold}。每个神经元是一把键（输入权重决定它何时激活）加一个值（输出权重：它往残差流里加什么）。橙色：写入最多的神经元。点击一个，可把它的值读成词元。</translation>
    </message>
    <message>
        <source>&lt;b&gt;The whole MLP output&lt;/b&gt; through the unembedding promotes {promotes}; suppresses {suppresses}</source>
        <translation>&lt;b&gt;整个前馈网络的输出&lt;/b&gt;经反嵌入后，推高 {promotes}；压低 {suppresses}</translation>
    </message>
    <message>
        <source>&lt;b&gt;Neuron {neuron}&lt;/b&gt; of layer {layer}: its value vector W_out[{neuron}] · W_U&lt;br&gt;promotes: {promotes}&lt;br&gt;suppresses: {suppresses}</source>
        <translation>第 {layer} 层的&lt;b&gt;神经元 {neuron}&lt;/b&gt;：它的值向量 W_out[{neuron}] · W_U&lt;br&gt;推高：{promotes}&lt;br&gt;压低：{suppresses}</translation>
    </message>
</context>
<context>
    <name>PairedBars</name>
    <message>
        <source>probability (the model&apos;s own)</source>
        <translation>概率（模型自身）</translation>
    </message>
    <message>
        <source>Next token: A vs B (run both prompts)</source>
        <translation>下一个词元：A 对比 B（请运行两个提示）</translation>
    </message>
    <message>
        <source>Next token: A (blue) top {a}, B (orange) top {b}</source>
        <translation>下一个词元：A（蓝）首选 {a}，B（橙）首选 {b}</translation>
    </message>
</context>
<context>
    <name>PatchingPanel</name>
    <message>
        <source>Site</source>
        <translation>位置点</translation>
    </message>
    <message>
        <source>Target</source>
        <translation>目标</translation>
    </message>
    <message>
        <source>A&apos;s top token</source>
        <translation>A 的首选词元</translation>
    </message>
    <message>
        <source>Patch every cell</source>
        <translation>修补每个单元格</translation>
    </message>
    <message>
        <source>Cancel</source>
        <translation>取消</translation>
    </message>
    <message>
        <source>hover a cell for its numbers; click it to open that patched run beside A</source>
        <translation>悬停单元格查看数值；点击以在 A 旁打开该修补后的运行</translation>
    </message>
    <message>
        <source>Activation patching: A is the clean prompt, B the corrupted one (open B with Compare). Each cell copies one state of A&apos;s run into B&apos;s run and measures how much of A&apos;s answer comes back: (p − p_B) / (p_A − p_B).</source>
        <translation>激活修补：A 是干净提示，B 是破坏后的提示（通过“比较”打开 B）。每个单元格把 A 运行中的一个状态复制到 B 的运行中，并测量 A 的答案恢复了多少：(p − p_B) / (p_A − p_B)。</translation>
    </message>
    <message>
        <source>Run prompt A first.</source>
        <translation>请先运行提示 A。</translation>
    </message>
    <message>
        <source>Open a second prompt B (Compare) to patch A&apos;s states into it.</source>
        <translation>请打开第二个提示 B（比较），才能把 A 的状态修补进去。</translation>
    </message>
    <message>
        <source>Patching needs prompts of the same number of tokens: A has {na}, B has {nb}.
A: {ta}
B: {tb}</source>
        <translation>激活修补需要两个提示的词元数相同：A 有 {na} 个，B 有 {nb} 个。
A：{ta}
B：{tb}</translation>
    </message>
    <message>
        <source>Patching {site} of every layer and position…</source>
        <translation>正在修补每一层每个位置的 {site}…</translation>
    </message>
    <message>
        <source>L{layer}</source>
        <translation>第{layer}层</translation>
    </message>
    <message>
        <source>{site}: normalised effect on p({target}) (scale {lo:.2f} … {hi:.2f})</source>
        <translation>{site}：对 p({target}) 的归一化效果（色标 {lo:.2f} … {hi:.2f}）</translation>
    </message>
    <message>
        <source>p({target}): A (clean) {pa:.4f}, B (corrupted) {pb:.4f}. Best cell: layer {layer}, {kind} {col}: effect {effect:.3f}, p = {p:.4f}. {calls} graph calls, {ms:.0f} ms.</source>
        <translation>p({target})：A（干净）{pa:.4f}，B（破坏）{pb:.4f}。最佳单元格：第 {layer} 层，{kind} {col}：效果 {effect:.3f}，p = {p:.4f}。调用计算图 {calls} 次，{ms:.0f} 毫秒。</translation>
    </message>
    <message>
        <source>position</source>
        <translation>位置</translation>
    </message>
    <message>
        <source>head</source>
        <translation>注意力头</translation>
    </message>
    <message>
        <source>layer {layer}, {kind} {col}: effect {effect:.4f}, p({target}) = {p:.4f}</source>
        <translation>第 {layer} 层，{kind} {col}：效果 {effect:.4f}，p({target}) = {p:.4f}</translation>
    </message>
    <message>
        <source>This table was made for earlier prompts: run it again to open its cells.</source>
        <translation>这张表是为之前的提示算的：请重新运行，才能打开它的格子。</translation>
    </message>
</context>
<context>
    <name>PathView</name>
    <message>
        <source>target token (default: the next token)</source>
        <translation>目标词元（默认：下一个词元）</translation>
    </message>
    <message>
        <source>vs token (optional: a logit difference)</source>
        <translation>对比词元（可选：看逻辑值之差）</translation>
    </message>
    <message>
        <source>threshold</source>
        <translation>阈值</translation>
    </message>
    <message>
        <source>Edges are DLA-weighted (not LLM-TT&apos;s vector shares): signed, blue pushed and red pulled down, and before pruning they add up to the logit; only direct paths into this position are edges. Attribution freezes the final LayerNorm&apos;s scale at the real residual; the logit lens recomputes it at every depth, so their numbers differ.</source>
        <translation>边的粗细按直接逻辑值归因（DLA）加权（而不是 LLM-TT 的向量份额）：有正负之分，蓝色是推高，红色是压低，剪枝前它们加起来正好等于逻辑值；只有直接通向这个位置的路径才画成边。归因时把最终层归一化的缩放固定在真实残差上；Logit 透镜则在每个深度重新计算它，所以两者的数字不同。</translation>
    </message>
    <message>
        <source>hover an edge or a node for its numbers; click an edge to open its head, a node to see the logit lens there</source>
        <translation>鼠标悬停在边或节点上可查看数字；点击边打开对应的头，点击节点查看该处的 Logit 透镜</translation>
    </message>
    <message>
        <source>depth</source>
        <translation>深度</translation>
    </message>
    <message>
        <source>direct contribution</source>
        <translation>直接贡献</translation>
    </message>
    <message>
        <source>{0:.1f} % of total</source>
        <translation>占总量的 {0:.1f} %</translation>
    </message>
    <message>
        <source>Run a prompt to see which parts of the model pushed the next token.</source>
        <translation>运行一段提示词，即可查看是模型的哪些部分推出了下一个词元。</translation>
    </message>
    <message>
        <source>Direct logit attribution of {what} at position {pos}: logit {logit:.3f} = the parts + final LayerNorm bias {bias:+.3f}. {dropped} parts at or under the threshold are hidden (the kept ones are {kept:.0%} of the total |contribution|; widths renormalised). Largest source: {head}.</source>
        <translation>位置 {pos} 上 {what} 的直接逻辑值归因：逻辑值 {logit:.3f} = 各部分之和 + 最终层归一化的偏置 {bias:+.3f}。有 {dropped} 个部分不超过阈值，已隐藏（保留部分占总 |贡献| 的 {kept:.0%}；线宽已重新归一化）。最大来源：{head}。</translation>
    </message>
    <message>
        <source>With the interventions in force; before them this logit was {before:.3f} ({change:+.3f} now).</source>
        <translation>这是干预生效时的结果；干预之前这个 logit 是 {before:.3f}（现在变化 {change:+.3f}）。</translation>
    </message>
    <message>
        <source>embed</source>
        <translation>嵌入</translation>
    </message>
    <message>
        <source>how {0} got its logit: layers × positions (depth n = after block n−1)</source>
        <translation>{0} 的逻辑值从何而来：层 × 位置（深度 n = 模块 n−1 之后）</translation>
    </message>
    <message>
        <source>{label} (before {before:+.2f})</source>
        <translation>{label}（之前 {before:+.2f}）</translation>
    </message>
    <message>
        <source>what pushed {0} (and what pulled it down)</source>
        <translation>是什么推高了 {0}（又是什么压低了它）</translation>
    </message>
    <message>
        <source>with the interventions · grey outline = before them</source>
        <translation>加干预后 · 灰色轮廓 = 干预之前</translation>
    </message>
    <message>
        <source> reading {0} (position {1})</source>
        <translation> 读取 {0}（位置 {1}）</translation>
    </message>
    <message>
        <source>{label}{src}: {value:+.4f} to {target} ({share:.0%} of the kept edges)</source>
        <translation>{label}{src}：对 {target} 贡献 {value:+.4f}（占保留边的 {share:.0%}）</translation>
    </message>
    <message>
        <source>after the embeddings</source>
        <translation>嵌入之后</translation>
    </message>
    <message>
        <source>after block {0}</source>
        <translation>模块 {0} 之后</translation>
    </message>
    <message>
        <source>after block {0}&apos;s attention</source>
        <translation>模块 {0} 的注意力之后</translation>
    </message>
    <message>
        <source>{0} (position {1}) {2}</source>
        <translation>{0}（位置 {1}），{2}</translation>
    </message>
    <message>
        <source>: the parts so far add {0:+.4f}</source>
        <translation>：到此为止各部分之和为 {0:+.4f}</translation>
    </message>
    <message>
        <source> · lens there predicts {0} ({1:.1%})</source>
        <translation> · 该处透镜预测 {0}（{1:.1%}）</translation>
    </message>
</context>
<context>
    <name>PipelineView</name>
    <message>
        <source>◀ Previous stage</source>
        <translation>◀ 上一阶段</translation>
    </message>
    <message>
        <source>Next stage ▶</source>
        <translation>下一阶段 ▶</translation>
    </message>
    <message>
        <source>The pipeline shows every stage a token passes through. Run a prompt, then click a stage or walk through them with Previous / Next.</source>
        <translation>流水线展示了一个词元经过的每个阶段。运行一段提示词，然后点击某个阶段，或用“上一阶段 / 下一阶段”逐个走过。</translation>
    </message>
</context>
<context>
    <name>ProbabilityChart</name>
    <message>
        <source>probability</source>
        <translation>概率</translation>
    </message>
    <message>
        <source>ghost bar = model&apos;s own probability · solid = after settings · struck out = cut by top-k/top-p · ★ = what Step picks · click a bar to force it</source>
        <translation>虚线条 = 模型原始概率 · 实心条 = 按采样设置之后 · 划掉 = 被 Top-k/Top-p 截掉 · ★ = “单步”会选的词元 · 点击一根条可强制选它</translation>
    </message>
    <message>
        <source>Temperature</source>
        <translation>温度</translation>
    </message>
    <message>
        <source>Top-k</source>
        <translation>Top-k</translation>
    </message>
    <message>
        <source>Top-p</source>
        <translation>Top-p</translation>
    </message>
    <message>
        <source>Seed</source>
        <translation>随机种子</translation>
    </message>
    <message>
        <source>0 (greedy)</source>
        <translation>0（贪婪）</translation>
    </message>
    <message>
        <source>off</source>
        <translation>关闭</translation>
    </message>
    <message>
        <source>off (1.0)</source>
        <translation>关闭（1.0）</translation>
    </message>
    <message>
        <source>Next token</source>
        <translation>下一个词元</translation>
    </message>
    <message>
        <source>  (model {raw:.1%})</source>
        <translation>  （模型 {raw:.1%}）</translation>
    </message>
    <message>
        <source>  (before {before:.1%}, {delta:+.1%})</source>
        <translation>  （干预前 {before:.1%}，{delta:+.1%}）</translation>
    </message>
    <message>
        <source>Next token after position {position} · {kept:,} of {vocab:,} tokens kept · entropy {entropy:.2f} nats</source>
        <translation>位置 {position} 之后的下一个词元 · {vocab:,} 个词元中保留 {kept:,} 个 · 熵 {entropy:.2f} 奈特</translation>
    </message>
    <message>
        <source>with {interventions} · ghost = before</source>
        <translation>干预：{interventions} · 虚影 = 干预之前</translation>
    </message>
</context>
<context>
    <name>Report</name>
    <message>
        <source>Who wrote the answer: direct logit attribution</source>
        <translation>答案是谁写的：直接逻辑值归因</translation>
    </message>
    <message>
        <source>The logit of {target} ({logit}) split into what each part of the model wrote directly (final LayerNorm scale frozen at the real residual). Largest source: {headline}. Top parts: {parts}.</source>
        <translation>把 {target} 的逻辑值（{logit}）拆分成模型各部分直接写入的量（最终层归一化的缩放固定在真实残差上）。最大来源：{headline}。贡献最大的几个部分：{parts}。</translation>
    </message>
    <message>
        <source>The life of the next token</source>
        <translation>下一个词元的一生</translation>
    </message>
    <message>
        <source>A gpt2viz report: one token traced through GPT-2</source>
        <translation>gpt2viz 报告：追踪一个词元穿过 GPT-2 的全过程</translation>
    </message>
    <message>
        <source>Prompt</source>
        <translation>提示词</translation>
    </message>
    <message>
        <source>Model</source>
        <translation>模型</translation>
    </message>
    <message>
        <source>{params} parameters · {n_layer} layers × {n_head} heads · {n_embd} wide · context {n_positions}</source>
        <translation>{params} 个参数 · {n_layer} 层 × {n_head} 头 · {n_embd} 维 · 上下文 {n_positions}</translation>
    </message>
    <message>
        <source>Date</source>
        <translation>日期</translation>
    </message>
    <message>
        <source>Next token</source>
        <translation>下一个词元</translation>
    </message>
    <message>
        <source>Generated before this step</source>
        <translation>此步之前已生成</translation>
    </message>
    <message>
        <source>none</source>
        <translation>无</translation>
    </message>
    <message>
        <source>off</source>
        <translation>关闭</translation>
    </message>
    <message>
        <source>Reproducibility</source>
        <translation>可复现信息</translation>
    </message>
    <message>
        <source>Model files (sha256)</source>
        <translation>模型文件（sha256）</translation>
    </message>
    <message>
        <source>Settings</source>
        <translation>采样设置</translation>
    </message>
    <message>
        <source>temperature {temperature}, top-k {top_k}, top-p {top_p}, seed {seed}; {steps} step(s) after the prompt</source>
        <translation>温度 {temperature}，Top-k {top_k}，Top-p {top_p}，随机种子 {seed}；提示词之后已生成 {steps} 步</translation>
    </message>
    <message>
        <source>gpt2viz version</source>
        <translation>gpt2viz 版本</translation>
    </message>
    <message>
        <source>Command</source>
        <translation>命令</translation>
    </message>
    <message>
        <source>Interventions</source>
        <translation>干预</translation>
    </message>
    <message>
        <source>Contents</source>
        <translation>目录</translation>
    </message>
</context>
<context>
    <name>ResidualView</name>
    <message>
        <source>norm</source>
        <translation>范数</translation>
    </message>
    <message>
        <source>cosine to final residual</source>
        <translation>与最终残差的余弦相似度</translation>
    </message>
    <message>
        <source>depth (0 = embeddings, then after each block)</source>
        <translation>深度（0 = 嵌入，之后逐模块）</translation>
    </message>
    <message>
        <source>residual after</source>
        <translation>之后的残差</translation>
    </message>
    <message>
        <source>attention adds</source>
        <translation>注意力加入</translation>
    </message>
    <message>
        <source>MLP adds</source>
        <translation>前馈网络加入</translation>
    </message>
    <message>
        <source>Run a prompt to see the residual stream.</source>
        <translation>运行一段提示词，即可查看残差流。</translation>
    </message>
    <message>
        <source>Position {pos} {token}: the residual stream is the sum every block writes into. Top: its size after each block and the size of what attention and the MLP of that block added. Bottom: how close its direction already is to the final one (1 = same direction).</source>
        <translation>位置 {pos} {token}：残差流是每个模块都往里写的那个总和。上图：每个模块之后它的大小，以及该模块的注意力和前馈网络各加了多大的量。下图：它的方向与最终方向已有多接近（1 = 方向相同）。</translation>
    </message>
</context>
<context>
    <name>Settings</name>
    <message>
        <source>The settings file {file} was damaged and could not be read; it was kept as {kept} and the app started with the default settings.</source>
        <translation>设置文件 {file} 已损坏，无法读取；它已保留为 {kept}，程序以默认设置启动。</translation>
    </message>
    <message>
        <source>Some settings in {file} had values of the wrong kind and were reset to their defaults: {keys}.</source>
        <translation>{file} 中有些设置的值类型不对，已恢复为默认值：{keys}。</translation>
    </message>
    <message>
        <source>The settings file {file} cannot be written (read-only file or folder): the app works, but your choices will not be remembered.</source>
        <translation>设置文件 {file} 无法写入（文件或文件夹是只读的）：程序照常工作，但不会记住你的选择。</translation>
    </message>
</context>
<context>
    <name>Snapshot</name>
    <message>
        <source>pipeline</source>
        <translation>流水线</translation>
    </message>
    <message>
        <source>chart</source>
        <translation>下一词元图</translation>
    </message>
    <message>
        <source>tokens</source>
        <translation>词元</translation>
    </message>
    <message>
        <source>embeddings</source>
        <translation>嵌入</translation>
    </message>
    <message>
        <source>attention</source>
        <translation>注意力</translation>
    </message>
    <message>
        <source>head</source>
        <translation>注意力头</translation>
    </message>
    <message>
        <source>mlp</source>
        <translation>前馈网络</translation>
    </message>
    <message>
        <source>lens</source>
        <translation>Logit 透镜</translation>
    </message>
    <message>
        <source>residual</source>
        <translation>残差流</translation>
    </message>
    <message>
        <source>path</source>
        <translation>路径</translation>
    </message>
    <message>
        <source>attribution</source>
        <translation>归因</translation>
    </message>
    <message>
        <source>data</source>
        <translation>数据</translation>
    </message>
    <message>
        <source>activation patching</source>
        <translation>激活修补</translation>
    </message>
    <message>
        <source>causal trace</source>
        <translation>因果追踪</translation>
    </message>
    <message>
        <source>chart, A vs B</source>
        <translation>图表，A 对比 B</translation>
    </message>
    <message>
        <source>lens, A vs B</source>
        <translation>透镜，A 对比 B</translation>
    </message>
    <message>
        <source>attention, A vs B</source>
        <translation>注意力，A 对比 B</translation>
    </message>
    <message>
        <source>features</source>
        <translation>特征</translation>
    </message>
    <message>
        <source>feature</source>
        <translation>特征页</translation>
    </message>
    <message>
        <source>“{prompt}”</source>
        <translation>“{prompt}”</translation>
    </message>
    <message>
        <source>step {step}</source>
        <translation>第 {step} 步</translation>
    </message>
    <message>
        <source>layer {value}</source>
        <translation>第 {value} 层</translation>
    </message>
    <message>
        <source>head {value}</source>
        <translation>头 {value}</translation>
    </message>
    <message>
        <source>position {value}</source>
        <translation>位置 {value}</translation>
    </message>
    <message>
        <source>B: “{prompt}”</source>
        <translation>B：“{prompt}”</translation>
    </message>
    <message>
        <source>interventions: {list}</source>
        <translation>干预：{list}</translation>
    </message>
    <message>
        <source>interventions in B: {list}</source>
        <translation>B 中的干预：{list}</translation>
    </message>
    <message>
        <source>{view}: every layer of {model}</source>
        <translation>{view}：{model} 的每一层</translation>
    </message>
</context>
<context>
    <name>Stages</name>
    <message>
        <source>Tokens</source>
        <translation>词元</translation>
    </message>
    <message>
        <source>Embed + pos</source>
        <translation>嵌入 + 位置</translation>
    </message>
    <message>
        <source>Final LN</source>
        <translation>最终层归一化</translation>
    </message>
    <message>
        <source>LM head</source>
        <translation>LM 头</translation>
    </message>
    <message>
        <source>Softmax</source>
        <translation>Softmax</translation>
    </message>
    <message>
        <source>Pick</source>
        <translation>选择</translation>
    </message>
    <message>
        <source>Block {layer}</source>
        <translation>模块 {layer}</translation>
    </message>
    <message>
        <source>{token}
pos {position}</source>
        <translation>{token}
位置 {position}</translation>
    </message>
    <message>
        <source>‖x‖ {norm:.1f}
{n_embd}-d</source>
        <translation>‖x‖ {norm:.1f}
{n_embd} 维</translation>
    </message>
    <message>
        <source>h{head} {weight:.0%}
{token} {prob:.0%}</source>
        <translation>头{head} {weight:.0%}
{token} {prob:.0%}</translation>
    </message>
    <message>
        <source>{token} #{rank} Δ{delta:+.0%}</source>
        <translation>{token} #{rank} Δ{delta:+.0%}</translation>
    </message>
    <message>
        <source>‖x‖ {norm:.1f}</source>
        <translation>‖x‖ {norm:.1f}</translation>
    </message>
    <message>
        <source>{vocab:,} logits
max {logit:.1f}</source>
        <translation>{vocab:,} 逻辑值
最大 {logit:.1f}</translation>
    </message>
    <message>
        <source>{token}
{prob:.1%}</source>
        <translation>{token}
{prob:.1%}</translation>
    </message>
    <message>
        <source>next was
{token}</source>
        <translation>下一个是
{token}</translation>
    </message>
    <message>
        <source>“{token}”</source>
        <translation>“{token}”</translation>
    </message>
    <message>
        <source>The text became {n_tokens} tokens (byte-pair pieces; a leading space belongs to the token). Position {position} is {token}, id {id}. The model reads at most {n_positions} tokens.</source>
        <translation>这段文字变成了 {n_tokens} 个词元（字节对编码切出的片段；词前的空格属于该词元）。位置 {position} 是 {token}，id 为 {id}。模型一次最多读 {n_positions} 个词元。</translation>
    </message>
    <message>
        <source>{token} is looked up in a table of {vocab:,} learned vectors of {n_embd} numbers (norm {embed_norm:.2f}); the vector for position {position} (norm {pos_norm:.2f}) is added. Their sum (norm {sum_norm:.2f}) starts the residual stream that every block reads from and writes into.</source>
        <translation>在一张由 {vocab:,} 个训练得来的向量（每个 {n_embd} 个数）组成的表里查出 {token}（范数 {embed_norm:.2f}），再加上位置 {position} 的向量（范数 {pos_norm:.2f}）。两者之和（范数 {sum_norm:.2f}）就是残差流的起点，之后每个模块都从中读取、向其写入。</translation>
    </message>
    <message>
        <source>Its {n_head} attention heads let {token} read earlier tokens; head {head} puts {weight:.0%} of its attention on {key_token} (position {key}). Attention adds a vector of norm {attn_norm:.2f}, then the MLP&apos;s {d_mlp:,} neurons add norm {mlp_norm:.2f}; the residual&apos;s norm is now {resid_norm:.2f}. Read out here, it would predict {lens_token} ({lens_prob:.0%}).</source>
        <translation>该模块的 {n_head} 个注意力头让 {token} 读取前面的词元；头 {head} 把 {weight:.0%} 的注意力放在 {key_token}（位置 {key}）上。注意力加入一个范数为 {attn_norm:.2f} 的向量，随后前馈网络的 {d_mlp:,} 个神经元再加入范数 {mlp_norm:.2f}；此时残差流的范数为 {resid_norm:.2f}。如果在这里读出，它会预测 {lens_token}（{lens_prob:.0%}）。</translation>
    </message>
    <message>
        <source>The final LayerNorm recentres and rescales the residual (norm {norm_in:.2f} → {norm_out:.2f}) so the unembedding sees a vector of standard size.</source>
        <translation>最终层归一化把残差流重新居中并缩放（范数 {norm_in:.2f} → {norm_out:.2f}），让反嵌入拿到一个标准大小的向量。</translation>
    </message>
    <message>
        <source>, </source>
        <translation>、</translation>
    </message>
    <message>
        <source>{token} {value:.2f}</source>
        <translation>{token} {value:.2f}</translation>
    </message>
    <message>
        <source>The LM head multiplies by the {vocab:,} token embeddings again (tied weights) to score every possible next token: {scores}. Only the last position&apos;s scores choose the next token; it is the only one that has seen the whole text.</source>
        <translation>LM 头再乘一次那 {vocab:,} 个词元嵌入（权重共享），给每个可能的下一个词元打分：{scores}。只有最后一个位置的分数决定下一个词元，因为只有它看过完整的文本。</translation>
    </message>
    <message>
        <source>{token} {prob:.1%}</source>
        <translation>{token} {prob:.1%}</translation>
    </message>
    <message>
        <source>Softmax turns scores into probabilities that sum to 1: {probs}. Entropy {entropy:.2f} nats (0 = certain, {max_entropy:.1f} = uniform).</source>
        <translation>Softmax 把分数变成加起来等于 1 的概率：{probs}。熵为 {entropy:.2f} 奈特（0 = 确定，{max_entropy:.1f} = 均匀分布）。</translation>
    </message>
    <message>
        <source> After this position came {token}.</source>
        <translation> 这个位置之后出现的是 {token}。</translation>
    </message>
    <message>
        <source>Only the newest position chooses the next token; select it to see the choice.</source>
        <translation>只有最新的位置会选出下一个词元；选中它即可查看这次选择。</translation>
    </message>
    <message>
        <source>temperature 0: always the most likely token</source>
        <translation>温度 0：总是选概率最高的词元</translation>
    </message>
    <message>
        <source>temperature {temperature:g}, top-k {top_k}, top-p {top_p:g}, seed {seed}</source>
        <translation>温度 {temperature:g}，Top-k {top_k}，Top-p {top_p:g}，随机种子 {seed}</translation>
    </message>
    <message>
        <source>off</source>
        <translation>关闭</translation>
    </message>
    <message>
        <source>{n:,} candidates remain</source>
        <translation>剩下 {n:,} 个候选</translation>
    </message>
    <message>
        <source>{n:,} candidate remains</source>
        <translation>剩下 {n:,} 个候选</translation>
    </message>
    <message>
        <source>Choosing the next token ({rule}): {remain}; the step will append {token} ({p_final:.1%} after the settings, {p_raw:.1%} as the model gave it). Then the whole path runs again for that one token, reusing the cached keys and values.</source>
        <translation>选择下一个词元（{rule}）：{remain}；这一步将追加 {token}（按当前设置为 {p_final:.1%}，模型原始给出 {p_raw:.1%}）。之后整条路径只为这一个词元再走一遍，并复用缓存的键和值。</translation>
    </message>
    <message>
        <source>#{feature} {label} ({value:.2f})</source>
        <translation>#{feature} {label}（{value:.2f}）</translation>
    </message>
    <message>
        <source>Read as sparse-autoencoder features, its input at {token} is strongest in {items} (Features tab).</source>
        <translation>用稀疏自编码器的特征来读，它在 {token} 处的输入最强的特征是 {items}（见“特征”标签页）。</translation>
    </message>
</context>
<context>
    <name>StepControls</name>
    <message>
        <source>◀ Back</source>
        <translation>◀ 上一步</translation>
    </message>
    <message>
        <source>Step ▶</source>
        <translation>单步 ▶</translation>
    </message>
    <message>
        <source>Reset</source>
        <translation>重置</translation>
    </message>
    <message>
        <source>Undo the last step (←): restores the stored state, no recomputation</source>
        <translation>撤销上一步（←）：恢复已保存的状态，不重新计算</translation>
    </message>
    <message>
        <source>Append one token using the KV cache (Space or →)</source>
        <translation>利用 KV 缓存追加一个词元（空格键或 →）</translation>
    </message>
    <message>
        <source>Step automatically at the pace on the right</source>
        <translation>按右侧设定的节奏自动单步</translation>
    </message>
    <message>
        <source>Back to the prompt</source>
        <translation>回到提示词</translation>
    </message>
    <message>
        <source>Pace</source>
        <translation>节奏</translation>
    </message>
    <message>
        <source>{ms} ms</source>
        <translation>{ms} ms</translation>
    </message>
    <message>
        <source>Pause</source>
        <translation>暂停</translation>
    </message>
    <message>
        <source>Play</source>
        <translation>播放</translation>
    </message>
</context>
<context>
    <name>TokenStrip</name>
    <message>
        <source>generated</source>
        <translation>生成</translation>
    </message>
    <message>
        <source>prompt</source>
        <translation>提示词</translation>
    </message>
    <message>
        <source>position {pos} · id {id} · bytes {bytes} · {kind}</source>
        <translation>位置 {pos} · id {id} · 字节 {bytes} · {kind}</translation>
    </message>
    <message>
        <source>Type a prompt and press Run (Ctrl+Enter).</source>
        <translation>输入提示词并点击“运行”（Ctrl+Enter）。</translation>
    </message>
    <message>
        <source>… {n} earlier</source>
        <translation>… 前面还有 {n} 个</translation>
    </message>
</context>
<context>
    <name>TokensView</name>
    <message>
        <source>position</source>
        <translation>位置</translation>
    </message>
    <message>
        <source>id</source>
        <translation>id</translation>
    </message>
    <message>
        <source>token</source>
        <translation>词元</translation>
    </message>
    <message>
        <source>bytes</source>
        <translation>字节</translation>
    </message>
    <message>
        <source>kind</source>
        <translation>类型</translation>
    </message>
    <message>
        <source>Run a prompt to see its tokens.</source>
        <translation>运行一段提示词，即可查看它的词元。</translation>
    </message>
    <message>
        <source>{n} tokens for {n_bytes} bytes of UTF-8 · context {n}/{n_positions}. A leading space belongs to the token (␣): “unbelievable” is 4 pieces (un|bel|iev|able) but “␣unbelievable” is one. Tokens marked [i-j/n] hold bytes i..j of an n-byte character.</source>
        <translation>{n_bytes} 字节的 UTF-8 文本共 {n} 个词元 · 上下文 {n}/{n_positions}。词前的空格属于该词元（␣）：“unbelievable”被切成 4 块（un|bel|iev|able），而“␣unbelievable”只是一个词元。标为 [i-j/n] 的词元装的是某个 n 字节字符的第 i 到 j 个字节。</translation>
    </message>
    <message>
        <source>generated</source>
        <translation>生成</translation>
    </message>
    <message>
        <source>prompt</source>
        <translation>提示词</translation>
    </message>
    <message>
        <source> · partial character</source>
        <translation> · 不完整字符</translation>
    </message>
</context>
<context>
    <name>Views</name>
    <message>
        <source>layer </source>
        <translation>层 </translation>
    </message>
</context>
<context>
    <name>Worker</name>
    <message>
        <source>no model is loaded</source>
        <translation>尚未加载模型</translation>
    </message>
    <message>
        <source>run a prompt first</source>
        <translation>请先运行一段提示词</translation>
    </message>
</context>
</TS>
